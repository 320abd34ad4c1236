#!/usr/bin/env bash
# Builds flow-kafka and the benchmarks module, then runs io.flowkafka.benchmarks.DriverBenchmark (see --help):
#   benchmarks/run-driver.sh                                         # wait-click join on the test drivers, updates benchmarks/RESULTS.md
#   benchmarks/run-driver.sh --impressions 20000 --runs 1 --no-results   # a quick check
# Environment as for run.sh.
BENCH_MAIN=io.flowkafka.benchmarks.DriverBenchmark exec "$(dirname "$0")/run.sh" "$@"
