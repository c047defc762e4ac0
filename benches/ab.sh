#!/usr/bin/env bash
# A/B of two builds of the divan bench binary, one entry per process, the two
# binaries' processes alternating (their order flips every round), so that a
# machine's slow phase hits both alike.
#
#   benches/ab.sh ROUNDS OLD_BIN NEW_BIN ENTRY...
#
# ENTRY is a divan path as `--list` prints it, joined with `::`, for example
# `channels::tokio_runtime::current_thread_p1::AsyncbandSpsc::64`. For each
# entry it prints the quartiles of the per-process medians of OLD and NEW, the
# ratio of their medians, and P(new<old): the share of (old, new) process
# pairs in which the new one was faster (0.5 = no difference, 1.0 = every new
# process faster than every old one), and the median of each round's new/old
# ratio: the two processes of a round run back to back, so a phase of the
# machine that lasts longer than a round cancels out of it. Keep a copy of the
# old binary first:
#
#   cargo bench -p asyncband-benches --bench channels --no-run   # prints the path
#   cp target/release/deps/channels-<hash> /tmp/channels-old
#   # change the code, build again, then:
#   benches/ab.sh 10 /tmp/channels-old target/release/deps/channels-<hash> ENTRY...
#
# An ENTRY of the form OLD_ENTRY=NEW_ENTRY runs OLD_ENTRY in OLD and
# NEW_ENTRY in NEW: with one binary as both, it sets asyncband against a
# peer in one cell with as many processes as wanted, for example
# `channels::one_thread::mpsc::burst_unbounded::Kanal=channels::one_thread::mpsc::burst_unbounded::AsyncbandMpsc`.
set -euo pipefail

if [ $# -lt 4 ]; then
  sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
rounds=$1 old=$2 new=$3
shift 3
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# divan's summary row for an entry: the median is the third column; converts
# it to ns.
median_ns() {
  "$1" --bench --exact "$2" --color never 2>/dev/null |
    grep -E '^\s*(╰|├)─' | tail -1 | awk -F'│' '{print $3}' |
    awk '{v = $1; u = $2
          if (u == "ps") v /= 1000; else if (u == "µs" || u == "us") v *= 1e3
          else if (u == "ms") v *= 1e6; else if (u == "s") v *= 1e9
          print v}'
}

for round in $(seq "$rounds"); do
  for entry in "$@"; do
    order="old new"
    [ $((round % 2)) -eq 0 ] && order="new old"
    for side in $order; do
      bin=$old run=${entry%%=*}
      [ "$side" = new ] && bin=$new run=${entry#*=}
      value=$(median_ns "$bin" "$run" || true)
      if [ -n "$value" ]; then
        printf '%s\t%s\t%s\t%s\n' "$entry" "$side" "$value" "$round" >>"$out"
      else
        echo "ab.sh: $bin measured nothing for $run" >&2
      fi
    done
  done
done

for entry in "$@"; do
  awk -F'\t' -v e="$entry" '
    function quartile(a, n, p,   i, j, t) {
      for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
      return a[int(p * (n - 1)) + 1]
    }
    $1 == e && $2 == "old" { o[++no] = $3 + 0; ro[$4] = $3 + 0 }
    $1 == e && $2 == "new" { n[++nn] = $3 + 0; rn[$4] = $3 + 0 }
    END {
      if (no == 0 || nn == 0) { printf "%s: no measurements\n", e; exit }
      wins = 0
      for (i = 1; i <= no; i++) for (j = 1; j <= nn; j++) wins += (n[j] < o[i]) + 0.5 * (n[j] == o[i])
      for (i = 1; i <= no; i++) oc[i] = o[i]; for (i = 1; i <= nn; i++) nc[i] = n[i]
      o25 = quartile(oc, no, .25); o50 = quartile(oc, no, .5); o75 = quartile(oc, no, .75)
      n25 = quartile(nc, nn, .25); n50 = quartile(nc, nn, .5); n75 = quartile(nc, nn, .75)
      for (r in ro) if ((r in rn) && ro[r] > 0) pr[++np] = rn[r] / ro[r]
      paired = np ? quartile(pr, np, .5) : 0
      gsub(/channels::/, "", e)
      printf "%-55s old %10.2f %10.2f %10.2f | new %10.2f %10.2f %10.2f | new/old %.3f  P(new<old) %.2f  paired %.3f\n",
        e, o25, o50, o75, n25, n50, n75, n50 / o50, wins / (no * nn), paired
    }' "$out"
done
