#!/usr/bin/env bash
# Builds flow-kafka and the benchmarks module, then runs io.flowkafka.benchmarks.CountingBenchmark
# with the given options (see --help), e.g.:
#   benchmarks/run.sh --runs 3                                   # the full comparison, updates benchmarks/RESULTS.md
#   benchmarks/run.sh --runs 1 --records 100000 --no-results     # a quick check
# Environment: MAVEN_ARGS (e.g. -o for offline), JAVA_OPTS (replaces the default heap settings),
# SKIP_BUILD=1 to reuse the last build, BENCH_MAIN to run another benchmark class (run-visitor.sh, run-timers.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${SKIP_BUILD:-}" != "1" ]]; then
  mvn -B -q ${MAVEN_ARGS:-} install -DskipTests -pl flow-kafka-core,flow-kafka-testing,flow-kafka-connectors,examples -am
  mvn -B -q ${MAVEN_ARGS:-} package -DskipTests -pl benchmarks
  # a private copy of the runtime jars: other builds may re-install flow-kafka-core into ~/.m2 mid-run
  rm -rf benchmarks/target/lib
  mvn -B -q ${MAVEN_ARGS:-} -pl benchmarks dependency:copy-dependencies \
    -DoutputDirectory=target/lib -DincludeScope=runtime
  # what was built: the commit, and whether flow-kafka-core had uncommitted changes
  dirty=$(git status --porcelain -- flow-kafka-core 2>/dev/null | wc -l)
  echo "flow-kafka $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$([[ "$dirty" != 0 ]] && echo " + $dirty uncommitted file(s) in flow-kafka-core"), built $(date -u +%Y-%m-%dT%H:%MZ)" \
    > benchmarks/target/built-from.txt
fi
exec java ${JAVA_OPTS:--Xms2g -Xmx2g} -XX:FlightRecorderOptions=stackdepth=256 \
  -Dbench.built.from="$(cat benchmarks/target/built-from.txt 2>/dev/null || echo unknown)" \
  -cp "benchmarks/target/classes:benchmarks/target/lib/*" \
  "${BENCH_MAIN:-io.flowkafka.benchmarks.CountingBenchmark}" "$@"
