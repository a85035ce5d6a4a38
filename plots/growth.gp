# SPDX-License-Identifier: GPL-2.0
# poolscope plot: stacked live bytes of the top tags plus "other", the unreclaimable total as a
# line, IOPS on the second axis. Called by `poolscope plot` with -e variables:
#   data, out, term ("png"|"svg"), title, unit ("MiB"|"GiB"), nstack (stacked columns incl.
#   other), ucol (column of the unreclaimable line, 0: none), uname, icol (IOPS column, 0: none),
#   bcol (first of two columns, the smallest and largest unreclaimable value of each point of a
#   long trace, drawn as a band around the line; 0: none), ymin (the lowest value the y axis
#   must show: below 0 when the unreclaimable total shrank), nmuted (the last stacked series
#   drawn in muted colours: "other", or the domains the verdict does not read), imax (top of
#   the IOPS axis)
# The data file is tab-separated with a header; column 1 is time (s), 2 the zero baseline,
# 3..2+nstack the cumulative stack (each column already includes those before it).
set datafile separator "\t"
if (term eq "svg") { set terminal svg size 1200,700 dynamic font "sans,11" background "white" } \
else { set terminal pngcairo size 1200,700 font "sans,10" background "white" }
set output out
set title title noenhanced
set xlabel "time (s)"
set ylabel sprintf("live bytes (%s)", unit)
set grid
set key outside below left horizontal maxcols 3 noenhanced
# the x axis ends where the data does, not at the next round tick
set autoscale xfix
# Ten distinct colours for the top tags; "other" (the last stacked series) is grey.
set linetype 1 lc rgb "#1f77b4"
set linetype 2 lc rgb "#ff7f0e"
set linetype 3 lc rgb "#2ca02c"
set linetype 4 lc rgb "#d62728"
set linetype 5 lc rgb "#9467bd"
set linetype 6 lc rgb "#8c564b"
set linetype 7 lc rgb "#e377c2"
set linetype 8 lc rgb "#bcbd22"
set linetype 9 lc rgb "#17becf"
set linetype 10 lc rgb "#7f7f7f"
set linetype 20 lc rgb "#c8c8c8"
set linetype 21 lc rgb "#b7d4ea"
set style fill transparent solid 0.7 noborder
set yrange [ymin:*]
# IOPS with plain tick labels (250000), never 1x10^6, up to imax (headroom above the line)
if (icol > 0) { set y2label "IOPS"; set y2tics; set ytics nomirror; set y2range [0:imax]; \
		set format y2 "%.0f" }
stack = "for [i=1:nstack] data using 1:(column(i+1)):(column(i+2)) with filledcurves lt (i > nstack - nmuted ? 20 + nstack - i : i) title columnhead(i+2)"
uline = "data using 1:(column(ucol)) with lines lw 2.5 lc rgb 'black' title uname"
iline = "data using 1:(column(icol)) axes x1y2 with lines lw 2 lc rgb '#d00000' title 'IOPS (workload, right axis)'"
band = "data using 1:(column(bcol)):(column(bcol+1)) with filledcurves fs transparent solid 0.35 lc rgb 'black' title uname . ' (min-max of each point)'"
cmd = "plot " . stack
if (bcol > 0) { cmd = cmd . ", " . band }
if (ucol > 0) { cmd = cmd . ", " . uline }
if (icol > 0) { cmd = cmd . ", " . iline }
eval cmd
