#!/usr/bin/env bash
# Builds flow-kafka and the benchmarks module, then runs io.flowkafka.benchmarks.TimerBenchmark:
#   benchmarks/run-timers.sh                                   # 10M timers, updates benchmarks/RESULTS.md
#   benchmarks/run-timers.sh --timers 200000 --no-results      # a quick check
# Environment as for run.sh (e.g. JAVA_OPTS="-Xms1g -Xmx1g -Dflow.embedded.transaction.version=1").
BENCH_MAIN=io.flowkafka.benchmarks.TimerBenchmark exec "$(dirname "$0")/run.sh" "$@"
