# Figures of a slaq sim run; render with: gnuplot plots.gp
set terminal svg size 800,450 dynamic font 'sans,12'
set datafile separator ','
set grid
set key outside right top

set output 'fig7a-loss.svg'
set title 'Average normalised loss of active jobs (Fig. 7a)'
set xlabel 'time (s)'
set ylabel 'normalised loss'
set yrange [0:1.05]
plot 'fair/timeline.csv' skip 1 using 1:3 with lines title 'fair', \
     'slaq-strawman/timeline.csv' skip 1 using 1:3 with lines title 'slaq-strawman', \
     'slaq-slaq-fit/timeline.csv' skip 1 using 1:3 with lines title 'slaq-slaq-fit', \
     'slaq-auto/timeline.csv' skip 1 using 1:3 with lines title 'slaq-auto', \
     'oracle-greedy/timeline.csv' skip 1 using 1:3 with lines title 'oracle-greedy'
set autoscale y

set output 'fig7b-reduction.svg'
set title 'Mean time to reach X% loss reduction (Fig. 7b)'
set xlabel 'loss reduction (%)'
set ylabel 'time since arrival (s)'
set yrange [0:*]
plot 'reduction.csv' skip 1 using 1:2 with linespoints title 'fair', \
     'reduction.csv' skip 1 using 1:3 with linespoints title 'slaq-strawman', \
     'reduction.csv' skip 1 using 1:4 with linespoints title 'slaq-slaq-fit', \
     'reduction.csv' skip 1 using 1:5 with linespoints title 'slaq-auto', \
     'reduction.csv' skip 1 using 1:6 with linespoints title 'oracle-greedy'
set autoscale y

set output 'fig8-cores-fair.svg'
set title 'Cores by loss group, fair (Fig. 8)'
set xlabel 'time (s)'
set ylabel 'cores'
plot 'fair/timeline.csv' skip 1 using 1:4 with lines title 'high loss (top 25%)', \
     '' skip 1 using 1:5 with lines title 'medium (next 25%)', \
     '' skip 1 using 1:6 with lines title 'low (bottom 50%)'

set output 'fig8-cores-slaq-strawman.svg'
set title 'Cores by loss group, slaq-strawman (Fig. 8)'
set xlabel 'time (s)'
set ylabel 'cores'
plot 'slaq-strawman/timeline.csv' skip 1 using 1:4 with lines title 'high loss (top 25%)', \
     '' skip 1 using 1:5 with lines title 'medium (next 25%)', \
     '' skip 1 using 1:6 with lines title 'low (bottom 50%)'

set output 'fig8-cores-slaq-slaq-fit.svg'
set title 'Cores by loss group, slaq-slaq-fit (Fig. 8)'
set xlabel 'time (s)'
set ylabel 'cores'
plot 'slaq-slaq-fit/timeline.csv' skip 1 using 1:4 with lines title 'high loss (top 25%)', \
     '' skip 1 using 1:5 with lines title 'medium (next 25%)', \
     '' skip 1 using 1:6 with lines title 'low (bottom 50%)'

set output 'fig8-cores-slaq-auto.svg'
set title 'Cores by loss group, slaq-auto (Fig. 8)'
set xlabel 'time (s)'
set ylabel 'cores'
plot 'slaq-auto/timeline.csv' skip 1 using 1:4 with lines title 'high loss (top 25%)', \
     '' skip 1 using 1:5 with lines title 'medium (next 25%)', \
     '' skip 1 using 1:6 with lines title 'low (bottom 50%)'

set output 'fig8-cores-oracle-greedy.svg'
set title 'Cores by loss group, oracle-greedy (Fig. 8)'
set xlabel 'time (s)'
set ylabel 'cores'
plot 'oracle-greedy/timeline.csv' skip 1 using 1:4 with lines title 'high loss (top 25%)', \
     '' skip 1 using 1:5 with lines title 'medium (next 25%)', \
     '' skip 1 using 1:6 with lines title 'low (bottom 50%)'

set output 'fig10c-sched.svg'
set title 'Scheduling time per epoch against active jobs (Fig. 10c)'
set xlabel 'active jobs'
set ylabel 'slaq\_sched\_epoch wall time (ms)'
set yrange [0:*]
stats 'fair/sched.csv' skip 1 using 2 nooutput
bw0 = STATS_max > 50 ? ceil(STATS_max / 50.0) : 1
stats 'slaq-strawman/sched.csv' skip 1 using 2 nooutput
bw1 = STATS_max > 50 ? ceil(STATS_max / 50.0) : 1
stats 'slaq-slaq-fit/sched.csv' skip 1 using 2 nooutput
bw2 = STATS_max > 50 ? ceil(STATS_max / 50.0) : 1
stats 'slaq-auto/sched.csv' skip 1 using 2 nooutput
bw3 = STATS_max > 50 ? ceil(STATS_max / 50.0) : 1
stats 'oracle-greedy/sched.csv' skip 1 using 2 nooutput
bw4 = STATS_max > 50 ? ceil(STATS_max / 50.0) : 1
plot 'fair/sched.csv' skip 1 using (bw0 * floor($2 / bw0)):3 smooth unique with linespoints title 'fair', \
     'slaq-strawman/sched.csv' skip 1 using (bw1 * floor($2 / bw1)):3 smooth unique with linespoints title 'slaq-strawman', \
     'slaq-slaq-fit/sched.csv' skip 1 using (bw2 * floor($2 / bw2)):3 smooth unique with linespoints title 'slaq-slaq-fit', \
     'slaq-auto/sched.csv' skip 1 using (bw3 * floor($2 / bw3)):3 smooth unique with linespoints title 'slaq-auto', \
     'oracle-greedy/sched.csv' skip 1 using (bw4 * floor($2 / bw4)):3 smooth unique with linespoints title 'oracle-greedy'
set autoscale y

set output 'fig9-sweep.svg'
set title 'Mean time to 90% / 95% loss reduction against arrival rate (Fig. 9)'
set xlabel 'mean inter-arrival time (s)'
set ylabel 'time since arrival (s)'
set yrange [0:*]
plot 'sweep.csv' skip 1 using 1:2 with linespoints linecolor 1 title 'fair 90%', \
     'sweep.csv' skip 1 using 1:3 with linespoints linecolor 1 dashtype 2 title 'fair 95%', \
     'sweep.csv' skip 1 using 1:6 with linespoints linecolor 2 title 'slaq-strawman 90%', \
     'sweep.csv' skip 1 using 1:7 with linespoints linecolor 2 dashtype 2 title 'slaq-strawman 95%', \
     'sweep.csv' skip 1 using 1:10 with linespoints linecolor 3 title 'slaq-slaq-fit 90%', \
     'sweep.csv' skip 1 using 1:11 with linespoints linecolor 3 dashtype 2 title 'slaq-slaq-fit 95%', \
     'sweep.csv' skip 1 using 1:14 with linespoints linecolor 4 title 'slaq-auto 90%', \
     'sweep.csv' skip 1 using 1:15 with linespoints linecolor 4 dashtype 2 title 'slaq-auto 95%', \
     'sweep.csv' skip 1 using 1:18 with linespoints linecolor 5 title 'oracle-greedy 90%', \
     'sweep.csv' skip 1 using 1:19 with linespoints linecolor 5 dashtype 2 title 'oracle-greedy 95%'
