#!/usr/bin/env bash
# Builds flow-kafka and the benchmarks module, then runs io.flowkafka.benchmarks.KeyVisitorBenchmark (see --help):
#   benchmarks/run-visitor.sh                     # achieved period and throughput, updates benchmarks/RESULTS.md
#   benchmarks/run-visitor.sh --keys 100000 --records 100000 --period-s 10 --runs 1 --no-results   # a quick check
# Environment as for run.sh.
BENCH_MAIN=io.flowkafka.benchmarks.KeyVisitorBenchmark exec "$(dirname "$0")/run.sh" "$@"
