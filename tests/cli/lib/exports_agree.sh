# shellcheck shell=bash
# Sourced by tests that check `export` against `report` on a trace:
#   exports_agree NAME TRACE DIR [REPORT/EXPORT WINDOW OPTIONS...]
# Per tag label (tags sharing a label, such as one call site in task and in IRQ context, add
# up), the folded stacks' bytes and pprof's inuse_space must equal the report's end_bytes,
# and pprof's alloc_objects the report's allocs, for the same window, slab-backing pages left
# out. Prints "ok NAME-..." or "FAIL NAME-...: why" lines; returns 1 on a failure. Needs
# $POOLSCOPE, jq and go (pprof); DIR is scratch.
exports_agree() {
	local name=$1 db=$2 dir=$3 bad=0
	shift 3
	"$POOLSCOPE" report "$db" "$@" --domain all --top 0 --format json > "$dir/$name.json" ||
		{ echo "FAIL $name-report: exit $?"; return 1; }
	# what the report says per label: live bytes at the window's end (those > 0), allocs
	jq -r '[.tags[] | select(.slab_backing | not) | select(.end_bytes > 0 or .allocs > 0)]
		| group_by(.tag)[]
		| "\(.[0].tag | gsub("[ ;]"; "_"))\t\(map(select(.end_bytes > 0) | .end_bytes) | add // 0)\t\(map(.allocs) | add)"' \
		"$dir/$name.json" | sort > "$dir/$name.want"
	[ -s "$dir/$name.want" ] || { echo "FAIL $name-report: no tag holds or allocated anything"; return 1; }
	"$POOLSCOPE" export "$db" "$@" --folded > "$dir/$name.folded" ||
		{ echo "FAIL $name-folded: exit $?"; return 1; }
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); s[f[k]] += n }
		END { for (t in s) printf "%s\t%d\n", t, s[t] }' "$dir/$name.folded" | sort > "$dir/$name.fgot"
	if diff <(awk -F'\t' '$2 > 0 { print $1 "\t" $2 }' "$dir/$name.want") "$dir/$name.fgot" > "$dir/$name.fdiff"; then
		echo "ok $name-folded-equals-report ($(wc -l < "$dir/$name.fgot") tags)"
	else
		echo "FAIL $name-folded-equals-report: report < > folded:"; head -20 "$dir/$name.fdiff"; bad=1
	fi
	rm -f "$dir/$name.pb.gz"
	"$POOLSCOPE" export "$db" "$@" --pprof "$dir/$name.pb.gz" 2> "$dir/$name.err" ||
		{ echo "FAIL $name-pprof: $(cat "$dir/$name.err")"; return 1; }
	go tool pprof -raw "$dir/$name.pb.gz" 2> "$dir/$name.err" | awk '
		/^ *[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+:/ { a = $1; u = $4; sub(/:$/, "", u); next }
		/^ *tag:\[/ { t = $0; sub(/^ *tag:\[/, "", t); sub(/\]$/, "", t); gsub(/[ ;]/, "_", t)
			      s[t] += u; c[t] += a; seen[t] = 1 }
		END { for (t in seen) printf "%s\t%d\t%d\n", t, s[t], c[t] }' | sort > "$dir/$name.pgot"
	if diff "$dir/$name.want" "$dir/$name.pgot" > "$dir/$name.pdiff"; then
		echo "ok $name-pprof-equals-report ($(wc -l < "$dir/$name.pgot") tags)"
	else
		echo "FAIL $name-pprof-equals-report (label, inuse_space, alloc_objects): report < > pprof:"
		head -20 "$dir/$name.pdiff"; cat "$dir/$name.err"; bad=1
	fi
	return $bad
}
