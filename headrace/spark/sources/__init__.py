"""Sources: Python Data Source stream readers with replayable offsets.

Every source produces rows of :data:`SOURCE_SCHEMA`:
``partition`` (watermark partition id), ``offset`` (position within the partition),
``arrival`` (arrival instant: processing clock; virtual in replay mode), ``raw`` (the record's
text, kept for the DLQ), ``doc`` (the parsed document, NULL when ``raw`` is not a JSON object),
``error`` (why ``doc`` is NULL; :data:`PLAIN` on text left to the JVM, see there), ``kind``
(0 data, 1 clock tick, 2 end of input), ``source_ts`` (the source's own record timestamp: event
time without ``timeField``) and ``key``.
"""
SOURCE_SCHEMA = ("partition string, offset bigint, arrival timestamp, raw string, doc variant, error string, "
                 "kind tinyint, source_ts timestamp, key string")

DATA, TICK, END = 0, 1, 2
#: ``error`` of a data row whose text holds no fraction outside its strings, so the JVM parses it
#: without normalising fractions (:mod:`headrace.spark.runtime.parse`): a marker, never a reason
PLAIN = "\u0000plain JSON"


def tick_row(partition: str) -> tuple:
    """A clock-tick row of :data:`SOURCE_SCHEMA` for ``partition``, arriving now."""
    import datetime as _dt

    now = _dt.datetime.now(_dt.timezone.utc)
    return (partition, -1, now, None, None, None, TICK, now, None)
