#!/usr/bin/env bash
# Builds the benchmarks module and runs one suite, from the repository root:
#   benchmarks/run.sh failover [--trials 30] ...   failover latency (about 15 min)
#   benchmarks/run.sh cost [--window 30] ...       Redis load, connections, threads, heap (about 10 min)
#   benchmarks/run.sh jmh [--iterations 5] ...     JMH micro-benchmarks (about 10 min)
#   benchmarks/run.sh scale [--elections 10000] ... 10,000 elections in one JVM, a 4 s stall (about 2 min)
#   benchmarks/run.sh handoff [--handoffs 600] ...  graceful hand-offs in one warm JVM (about 1 min)
#   benchmarks/run.sh partitions [--trials 5] ...  partitioned leadership rebalancing, 256 x 4 (about 5 min)
#   benchmarks/run.sh partitions-jvm [--trials 10] [--instances 4] [--pause 2s] ... the same over separate JVMs, with SIGKILL (about 4 min)
#   benchmarks/run.sh partitions-scale [--partitions 10000] ... threads, heap, Redis load (about 2 min)
#   benchmarks/run.sh discovery [--trials 10] ...  followers reading a new leader's URL (about 1 min)
#   benchmarks/run.sh all                          all three, one after another
# Each writes benchmarks/target/<suite>/summary.md; failover also writes docs/benchmarks-failover.svg.
# Needs Java 17+, Maven and redis-server on the PATH; starts and ends its own redis-server.
#
# The redlease core measured is the committed HEAD (exported with git archive and built apart), so
# the figures belong to one commit even while the working tree changes; BENCH_CORE_REF=<commit>
# measures another commit, BENCH_CORE_REF=worktree the working tree as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${1:-all}
shift || true

mvn -q -B -ntp -Pbenchmarks -pl benchmarks -am package -DskipTests

# Run from copies of this repository's jars, so that a build elsewhere in the tree (mvn clean)
# cannot pull classes from under child JVMs started minutes later.
lib=benchmarks/target/run-lib
rm -rf "$lib"
mkdir -p "$lib"
cp benchmarks/target/redlease-benchmarks-*.jar "$lib/"
core_ref=${BENCH_CORE_REF:-HEAD}
if [ "$core_ref" = worktree ]; then
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [ -n "$(git status --porcelain -- redlease-core redlease-test-support 2>/dev/null)" ]; then
    commit="$commit (+ uncommitted changes in redlease-core or redlease-test-support)"
  fi
  for module in redlease-core redlease-test-support; do
    cp "$module"/target/"$module"-*.jar "$lib/"
  done
else
  commit=$(git rev-parse --short "$core_ref")
  src=benchmarks/target/core-src
  rm -rf "$src"
  mkdir -p "$src"
  git archive "$core_ref" | tar -x -C "$src"
  mvn -q -B -ntp -f "$src/pom.xml" -pl redlease-core -am package -DskipTests
  for module in redlease-core redlease-test-support; do
    cp "$src/$module"/target/"$module"-*.jar "$lib/"
  done
fi
classpath=$(ls "$lib"/redlease-benchmarks-*.jar)
IFS=: read -ra entries < benchmarks/target/classpath.txt || true  # no trailing newline
for entry in "${entries[@]}"; do
  case "$entry" in
    "$PWD"/*) entry="$lib/$(basename "$entry")" ;;
  esac
  classpath="$classpath:$entry"
done

run() { java -Dredlease.commit="$commit" -cp "$classpath" "$@"; }

case "$suite" in
  failover) run io.redlease.benchmarks.failover.FailoverBenchmark "$@" ;;
  cost) run io.redlease.benchmarks.cost.CostBenchmark "$@" ;;
  jmh) run io.redlease.benchmarks.jmh.JmhSuite "$@" ;;
  scale) run io.redlease.benchmarks.scale.ScaleBenchmark "$@" ;;
  handoff) run io.redlease.benchmarks.scale.HandoffBenchmark "$@" ;;
  partitions) run io.redlease.benchmarks.partition.PartitionBenchmark "$@" ;;
  partitions-scale) run io.redlease.benchmarks.partition.PartitionScaleBenchmark "$@" ;;
  partitions-jvm) run io.redlease.benchmarks.partition.PartitionJvmBenchmark "$@" ;;
  discovery) run io.redlease.benchmarks.discovery.DiscoveryBenchmark "$@" ;;
  all)
    run io.redlease.benchmarks.failover.FailoverBenchmark
    run io.redlease.benchmarks.cost.CostBenchmark
    run io.redlease.benchmarks.jmh.JmhSuite
    ;;
  *) echo "usage: benchmarks/run.sh failover|cost|jmh|scale|handoff|partitions|partitions-jvm|partitions-scale|discovery|all [options]" >&2; exit 2 ;;
esac
