"""The processor runtime: what a micro-batch writes, and how (on the executors).

- :mod:`.records`: the output and DLQ documents of a micro-batch, built from rows where they are
  written, with deterministic ``_id``s (so a replayed batch writes the same documents).
- :mod:`.sinks`: one Spark job per micro-batch that builds those documents and writes them to
  the sink and the DLQ from an executor, with one error policy; the driver gets counts back.
"""
