"""Every default in one place."""

TS_FIELD_NAME = "_ts"                 # $source.tsFieldName
ALLOWED_LATENESS_MS = 3_000           # window allowedLateness: 3 seconds
BOUNDARY = "eventTime"                # window boundary
VALIDATION_ACTION = "discard"         # $validate.validationAction
MERGE_ON = ("_id",)                   # $merge.on
MERGE_WHEN_MATCHED = "merge"          # $merge.whenMatched
MERGE_WHEN_NOT_MATCHED = "insert"     # $merge.whenNotMatched
KAFKA_KEY_FORMAT = "binData"          # $emit.config.keyFormat (Kafka)
KAFKA_OUTPUT_FORMAT = "relaxedJson"   # $emit.config.outputFormat (Kafka)
SAMPLE_RATE_PER_S = 10.0              # sample source documents per second per processor
#: ``headrace demo``: seconds of readings the sample stream already holds at start, so the first
#: micro-batch closes windows (a window closes once W passes its end + allowedLateness)
DEMO_BACKLOG_S = 20.0
SAMPLE_DEVICES = 10                   # sample source: number of devices
SAMPLE_SEED = 42
STREAM_META = True                    # sinks add _stream_meta
GUARANTEE = "exactlyOnce"
MAX_RECORDS_PER_BATCH = 100_000       # sources: cap per micro-batch
#: the file source's cap on a micro-batch's bytes of text (``maxBytesPerBatch``): documents many
#: times larger than usual make fewer of them per batch, so a batch's memory stays bounded
MAX_BYTES_PER_BATCH = 64 << 20
CODEGEN_CACHE_ENTRIES = 400           # Spark's cache of compiled generated classes (default 100)
OBJECT_AGG_KEYS = 16_384              # groups an object aggregate hashes per task before sorting (Spark: 128)
#: what Spark's status store keeps of finished work (its UI is off; ``statusTracker`` reads it):
#: SQL executions, jobs, stages and tasks per stage. Spark keeps 1,000 / 1,000 / 1,000 / 100,000,
#: which a processor's few executions per micro-batch reach in minutes: the driver's live heap
#: grew 0.5 MB per batch until then (PROFILE.md)
STATUS_RETAINED = {"executions": 50, "jobs": 100, "stages": 100, "tasks": 1_000}
#: the JVM's JIT compilers (``HEADRACE_JIT``): "full" is HotSpot's tiers (C1, then C2 for hot
#: code: fastest once warm, seconds of compiler CPU per batch while warming), each tier's
#: thresholds 3x HotSpot's (Spark's planner code, run a few times per micro-batch, compiles less:
#: 500,000-line drains 5-10% faster for solar and q7, 1-3% for q5 and the pass-through; PROFILE.md);
#: "quick" stops at C1 (far less compiler CPU, generated code about 3x slower): for short runs
#: (process, demo)
JIT = "full"
JIT_MODES = {"full": " -XX:CompileThresholdScaling=3", "quick": " -XX:TieredStopAtLevel=1"}
#: the JVMs' garbage collector (``HEADRACE_GC``): "parallel", the throughput collector (a 1M-line
#: solar drain at G1's speed with 200-500 MB less memory; a full collection of 0.1-0.3 s every
#: 10-15 s while draining), "g1" (HotSpot's default: shorter pauses, a larger footprint) or
#: "serial" (one thread, the smallest footprint: the instance's small tiers)
GC = "parallel"
GC_MODES = {"parallel": " -XX:+UseParallelGC", "g1": " -XX:+UseG1GC", "serial": " -XX:+UseSerialGC"}
#: the driver JVM's heap (``HEADRACE_DRIVER_MEMORY``; Spark's own default too). Its live set while
#: draining 100,000-line batches is 100-340 MB; a larger heap only lets the collector defer work:
#: with 2g, solar, q5 and q7 drains ran at the same speed with 270-320 MB more PSS (PROFILE.md)
DRIVER_MEMORY = "1g"
CODEGEN_MIN_ROWS = 20_000             # micro-batches with fewer input rows run without generated code
SHUFFLE_PARTITIONS = 4                # Spark shuffle partitions on a cluster master (local masters: their cores)
SEQ_BROADCAST_MIN_ROWS = 20_000       # windowed micro-batches with fewer rows number arrival order in place
SEQ_FROM_OFFSETS = True               # ... unless each partition's rows arrived at one instant: base + offset
#: a windowed micro-batch runs in one pass (spark/runtime/one_pass.py) only after a batch of this many
#: data rows whose facts were the batch's before it (``HEADRACE_ONE_PASS_MIN_ROWS``): a small batch
#: saves little by it, and a batch whose facts change pays a second pass
ONE_PASS_MIN_ROWS = 10_000
TRIGGER_INTERVAL_MS = 0               # micro-batch trigger (0 = as fast as possible)
STOP_WAIT_S = 60.0                    # Processor.stop(): how long the running micro-batch may take to finish
LATE_REASON = "Input document arrived late."
DEDUP_MIN_HORIZON_MS = 1_000          # $source.dedup.horizon: at least 1 second
DEDUP_MAX_HORIZON_MS = 30 * 86_400_000  # ... and at most 30 days
DEDUP_BUCKETS = 8                     # time buckets (one Bloom filter each) per horizon
DEDUP_SHARDS = 4                      # catalog shards (executor tasks), fixed when a processor first runs
DEDUP_BLOOM_FPR = 0.01                # target false-positive rate of each bucket's Bloom filter
