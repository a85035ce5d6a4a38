# SPDX-License-Identifier: GPL-2.0
# poolscope plot A B: two runs side by side on one time axis (seconds from each run's start):
# tracked live bytes and the unreclaimable total of each, IOPS of each on the second axis.
# Variables: data, out, term, title, unit, ncols; the data file is tab-separated with a header,
# column 1 time, columns 2..ncols are series named by the header (IOPS series contain "IOPS").
set datafile separator "\t"
if (term eq "svg") { set terminal svg size 1200,700 dynamic font "sans,11" background "white" } \
else { set terminal pngcairo size 1200,700 font "sans,10" background "white" }
set output out
set title title noenhanced
set xlabel "time since start of each run (s)"
set ylabel sprintf("bytes (%s)", unit)
set y2label "IOPS (log scale)"
set logscale y2
set y2tics
set ytics nomirror
set grid
set key outside right top vertical noenhanced
set datafile missing "NaN"
plot for [i=2:ncols-2] data using 1:(column(i)) with lines lw 2.5 title columnhead(i), \
     for [i=ncols-1:ncols] data using 1:(column(i)) axes x1y2 with lines lw 1.5 dt 2 \
	title columnhead(i)
