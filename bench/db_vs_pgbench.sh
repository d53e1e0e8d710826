#!/usr/bin/env bash
# Physical reads per DB CPU second: `iolens db run` (the SLOB method: 64-row
# index range selects, one row per block) against `pgbench -S` (one-row
# primary-key lookups), both on the same managed cluster with the same
# shared_buffers. Prints both figures and their ratio (target: >= 1).
#
# Usage: bench/db_vs_pgbench.sh [PG_DIR]
# Environment: IOLENS (binary; default target/release/iolens, built if missing),
#   SCHEMAS (2), SCALE (blocks per schema, 20000), CACHE (16M), SESSIONS (4),
#   RUNTIME (seconds, 20), WARMUP (seconds, 5), OUT (raw results, target/bench-db).
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMAS=${SCHEMAS:-2}
SCALE=${SCALE:-20000}
CACHE=${CACHE:-16M}
SESSIONS=${SESSIONS:-4}
RUNTIME=${RUNTIME:-20}
WARMUP=${WARMUP:-5}
OUT=${OUT:-target/bench-db}
PG_DIR=${1:-target/bench-db-pg}
IOLENS=${IOLENS:-target/release/iolens}

if [ ! -x "$IOLENS" ]; then
  cargo build --release -p iolens >&2
fi
command -v pgbench >/dev/null || { echo "pgbench not found: apt-get install postgresql-client" >&2; exit 2; }
mkdir -p "$OUT"
PG_DIR=$(realpath -m "$PG_DIR")
trap '"$IOLENS" db teardown --pg-dir "$PG_DIR" >/dev/null 2>&1 || true' EXIT

echo "== setup: $SCHEMAS schemas x $SCALE blocks, shared_buffers $CACHE" >&2
"$IOLENS" db setup --pg-dir "$PG_DIR" --schemas "$SCHEMAS" --scale "$SCALE" \
  --cache "$CACHE" --keep -q > "$OUT/setup.txt"

echo "== iolens db run: $SESSIONS sessions, ${RUNTIME}s, read-only" >&2
"$IOLENS" db run --pg-dir "$PG_DIR" --cache "$CACHE" --keep --sessions "$SESSIONS" \
  --update-pct 0 --runtime "${RUNTIME}s" --warmup "${WARMUP}s" --no-evict -q --json \
  --output "$OUT/iolens-$(date +%s)" > "$OUT/iolens.json"

# The kept server: its socket, port and data directory.
read -r SOCK PORT < <(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(s["running"]["socket_dir"], s["port"])' "$PG_DIR/iolens-cluster.json")
DATA="$PG_DIR/data"
PSQL=(psql -X -q -h "$SOCK" -p "$PORT" -U iolens -d iolens -At)

# CPU seconds (user+sys, reaped children included) of the server's processes:
# every process whose working directory is the data directory.
server_cpu() {
  local hz total=0 p
  hz=$(getconf CLK_TCK)
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/cwd" 2>/dev/null)" = "$DATA" ] || continue
    total=$(awk -v t="$total" '{ sub(/.*\) /, ""); print t + $12 + $13 + $14 + $15 }' "$p/stat" 2>/dev/null || echo "$total")
  done
  awk -v t="$total" -v hz="$hz" 'BEGIN { printf "%.3f", t / hz }'
}
blks_read() { "${PSQL[@]}" -c "SELECT blks_read FROM pg_stat_database WHERE datname = 'iolens'"; }

# pgbench data of about the same size as the iolens schemas (~15 MB per scale unit).
PGB_SCALE=$(( SCHEMAS * SCALE * 8 / 1024 / 15 ))
[ "$PGB_SCALE" -ge 1 ] || PGB_SCALE=1
echo "== pgbench -i -s $PGB_SCALE" >&2
pgbench -i -q -s "$PGB_SCALE" -h "$SOCK" -p "$PORT" -U iolens iolens > "$OUT/pgbench-init.txt" 2>&1
echo "== pgbench -S: $SESSIONS clients, ${RUNTIME}s" >&2
pgbench -S -n -c "$SESSIONS" -j "$SESSIONS" -T "$WARMUP" -h "$SOCK" -p "$PORT" -U iolens iolens > /dev/null 2>&1
sleep 1
r0=$(blks_read); c0=$(server_cpu)
pgbench -S -n -c "$SESSIONS" -j "$SESSIONS" -T "$RUNTIME" -h "$SOCK" -p "$PORT" -U iolens iolens > "$OUT/pgbench.txt" 2>&1
sleep 1
r1=$(blks_read); c1=$(server_cpu)

python3 - "$OUT/iolens.json" "$r0" "$r1" "$c0" "$c1" "$OUT/pgbench.txt" <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1]))
db = doc["summary"]["db"]
r0, r1, c0, c1 = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
tps = re.search(r"tps = ([0-9.]+)", open(sys.argv[6]).read())
pg_reads, pg_cpu = r1 - r0, c1 - c0
io = db["reads_per_db_cpu_s"]
pg = pg_reads / pg_cpu if pg_cpu > 0 else float("nan")
print(f"iolens db run : {db['physical_read_iops']:>12,.0f} physical reads/s, "
      f"{db['db_cpu_s']:.1f} DB CPU s in {doc['summary']['measured_s']:.1f} s -> {io:>10,.0f} reads per DB CPU s")
print(f"pgbench -S    : {pg_reads:>12,} physical reads,   {pg_cpu:.1f} DB CPU s"
      f" ({tps.group(1) if tps else '?'} tps)      -> {pg:>10,.0f} reads per DB CPU s")
print(f"ratio iolens / pgbench -S: {io / pg:.2f}")
PY
