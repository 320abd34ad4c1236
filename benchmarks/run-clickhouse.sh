#!/usr/bin/env bash
# The ClickHouse sink benchmark (issue 26): rows/s into ClickHouse through TClickHouseBatchingSink (end to end:
# topic -> outbox -> batch inserts) vs a plain loop of the same batch inserts with the same HTTP client, side by side.
# Needs the server .ci/services starts (FLOW_CLICKHOUSE_URL, default http://127.0.0.1:18123). Builds the benchmarks
# module and what it needs, then runs io.flowkafka.benchmarks.ClickHouseSinkBenchmark with the given options, e.g.:
#   benchmarks/run-clickhouse.sh                                  # 200000 rows, batches of 5000
#   benchmarks/run-clickhouse.sh --rows 50000 --batch 1000        # a quick check
# Environment: MAVEN_ARGS (e.g. -o for offline), JAVA_OPTS, SKIP_BUILD=1 to reuse the last build. It prints a table
# row per job and writes no results file; the output is also in benchmarks/target/clickhouse-last-run.log.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${FLOW_CLICKHOUSE_URL:-}" && -f target/services.env ]]; then
  set -a; . target/services.env; set +a
fi
if [[ "${SKIP_BUILD:-}" != "1" ]]; then
  rm -rf benchmarks/target/lib
  mvn -B -q ${MAVEN_ARGS:-} package -Dmaven.test.skip=true -pl benchmarks -am
fi
java ${JAVA_OPTS:--Xms1g -Xmx1g} -cp "benchmarks/target/classes:benchmarks/target/lib/*" \
  io.flowkafka.benchmarks.ClickHouseSinkBenchmark "$@" \
  2>&1 | tee benchmarks/target/clickhouse-last-run.log
exit "${PIPESTATUS[0]}"
