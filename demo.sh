#!/usr/bin/env bash
# Runs the flow-kafka demo: builds what it needs, starts an in-JVM Kafka broker, produces sample
# impressions and clicks, runs Flow's wait-click join (30-minute event-time timers) with exactly-once
# over finite sources until the pipeline completes, and checks every result against a reference.
# Pass --bootstrap-servers host:port to use a real cluster instead.
set -euo pipefail
cd "$(dirname "$0")"
# Maven 3.8 writes terminal escape codes even in batch mode (-B -q): strip them, keep its messages
quiet_mvn() { mvn -B -q "$@" 2>&1 | sed -e $'s/\x1b\\[[0-9;]*[A-Za-z]//g'; }
quiet_mvn -DskipTests install -pl examples -am
quiet_mvn -pl examples dependency:build-classpath -Dmdep.outputFile=target/demo.classpath -Dmdep.includeScope=runtime
exec java -Xmx512m -cp "examples/target/classes:$(cat examples/target/demo.classpath)" \
  io.flowkafka.examples.waitclick.WaitClickDemo "$@"
