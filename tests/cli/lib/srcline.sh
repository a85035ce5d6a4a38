# shellcheck shell=bash
# Sourced by the source-line tests (tests/cli/srclines.sh, tests/live/record_srclines.sh):
# what the test objects of tests/fixtures/srcline/ hold, read without poolscope.

# objdump -d on stdin -> "FUNCTION 0xOFFSET", the return address of each function's first call:
# the call site a tracepoint would record there
srcline_retoffs() {
	local fn="" start=0 pend=0 done=" " line a
	while IFS= read -r line; do
		if [[ $line =~ ^([0-9a-f]+)\ \<([^>]+)\>:$ ]]; then
			fn=${BASH_REMATCH[2]} start=$((16#${BASH_REMATCH[1]})) pend=0
		elif [[ $line =~ ^\ +([0-9a-f]+):$'\t'(.*)$ ]]; then
			a=$((16#${BASH_REMATCH[1]}))
			if [ $pend = 1 ]; then
				printf '%s 0x%x\n' "$fn" $((a - start))
				pend=0 done="$done$fn "
			fi
			[[ ${BASH_REMATCH[2]} == call* && $done != *" $fn "* ]] && pend=1
		fi
	done
}

# a C source on stdin -> "NAME FILE:LINE" for each /* MARK(NAME) */, as its #line directives
# number it
srcline_marks() {
	local n=0 f="" line
	while IFS= read -r line; do
		if [[ $line =~ ^#line\ ([0-9]+)\ \"([^\"]+)\" ]]; then
			n=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]}
			continue
		fi
		[[ $line =~ /\*\ MARK\(([a-z]+)\)\ \*/ ]] && echo "${BASH_REMATCH[1]} $f:$n"
		n=$((n + 1))
	done
}
