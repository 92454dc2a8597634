"""The Spark runner of keyed computations (imports pyspark): each computation of a
:class:`headrace.keyed.Topology` is one streaming query, ``transformWithStateInPandas`` with the
RocksDB state store over the channel source; see :mod:`.runner`."""
