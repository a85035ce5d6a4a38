# SPDX-License-Identifier: GPL-2.0
# poolscope plot A B: two runs side by side on one time axis (seconds from each run's start):
# tracked live bytes and the unreclaimable total of each, IOPS of each run that has workload rows
# on the second axis. Variables: data, out, term, title, unit, ncols, niops (IOPS columns, the
# last ones, 0..2), imax (top of the IOPS axis); the data file is tab-separated with a header,
# column 1 time, columns 2..ncols series named by the header.
set datafile separator "\t"
if (term eq "svg") { set terminal svg size 1200,700 dynamic font "sans,11" background "white" } \
else { set terminal pngcairo size 1200,700 font "sans,10" background "white" }
set output out
set title title noenhanced
set xlabel "time since start of each run (s)"
set ylabel sprintf("bytes (%s)", unit)
set autoscale xfix
set grid
# below the plot, two entries a row: the plot keeps its width
set key outside below center horizontal maxcols 2 noenhanced
set datafile missing "NaN"
# run A blue, run B orange; tracked bytes solid, the counter dashed, IOPS thin on the right
set linetype 1 lc rgb "#1f77b4" lw 2.5
set linetype 2 lc rgb "#1f77b4" lw 2 dt 2
set linetype 3 lc rgb "#ff7f0e" lw 2.5
set linetype 4 lc rgb "#ff7f0e" lw 2 dt 2
set linetype 5 lc rgb "#6baed6" lw 1.5
set linetype 6 lc rgb "#fdae6b" lw 1.5
cmd = "plot for [i=2:5] data using 1:(column(i)) with lines lt (i-1) title columnhead(i)"
if (niops > 0) { \
	set y2label "IOPS"; set y2tics; set ytics nomirror; set y2range [0:imax]; \
	set format y2 "%.0f"; \
	cmd = cmd . ", for [i=6:ncols] data using 1:(column(i)) axes x1y2 with lines lt (i-1) title columnhead(i) . ' (right axis)'" }
eval cmd
