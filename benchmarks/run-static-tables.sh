#!/usr/bin/env bash
# The static-table benchmark (issue 25): the static-table source's read rate and TArrivalOrderTableSink's write rate,
# each vs a hand-written Kafka job doing the same work (plain-kafka: the target ratio) and vs a bare Avro loop over
# local files (plain: informational), side by side on one in-JVM broker, each flow-kafka and plain-kafka job in a JVM
# of its own. Builds the benchmarks module and what it needs, then runs
# io.flowkafka.benchmarks.StaticTablesBenchmark with the given options (see --help), e.g.:
#   benchmarks/run-static-tables.sh                                              # the comparison, updates benchmarks/RESULTS.md
#   benchmarks/run-static-tables.sh --rows 20000 --tables 4 --runs 1 --no-results   # a quick check
# Environment: MAVEN_ARGS (e.g. -o for offline), JAVA_OPTS (replaces the driver's heap settings),
# SKIP_BUILD=1 to reuse the last build. The output is also written to benchmarks/target/static-tables-last-run.log.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${SKIP_BUILD:-}" != "1" ]]; then
  # package (not install): flow-kafka's modules come from the work tree; the benchmarks module's runtime jars are
  # copied to benchmarks/target/lib at package time
  rm -rf benchmarks/target/lib
  mvn -B -q ${MAVEN_ARGS:-} package -Dmaven.test.skip=true -pl benchmarks -am
  dirty=$(git status --porcelain -- flow-kafka-core flow-kafka-connectors 2>/dev/null | wc -l)
  echo "flow-kafka $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$([[ "$dirty" != 0 ]] && echo " + $dirty uncommitted file(s) in flow-kafka-core/connectors"), built $(date -u +%Y-%m-%dT%H:%MZ)" \
    > benchmarks/target/built-from.txt
fi
# the driver JVM: broker, tables, input producer, the plain loops and the meters; the flow jobs get their own JVMs
java ${JAVA_OPTS:--Xms2g -Xmx2g} \
  -Dbench.built.from="$(cat benchmarks/target/built-from.txt 2>/dev/null || echo unknown)" \
  -cp "benchmarks/target/classes:benchmarks/target/lib/*" \
  io.flowkafka.benchmarks.StaticTablesBenchmark "$@" \
  2>&1 | tee benchmarks/target/static-tables-last-run.log
exit "${PIPESTATUS[0]}"
