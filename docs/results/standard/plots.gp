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
     'slaq/timeline.csv' skip 1 using 1:3 with lines title 'slaq', \
     'oracle/timeline.csv' skip 1 using 1:3 with lines title 'oracle'
set autoscale y

set output 'fig7b-reduction.svg'
set title 'Mean time to reach X% loss reduction (Fig. 7b)'
set xlabel 'loss reduction (%)'
set ylabel 'time since arrival (s)'
set yrange [0:*]
plot 'reduction.csv' skip 1 using 1:2 with linespoints title 'fair', \
     'reduction.csv' skip 1 using 1:3 with linespoints title 'slaq', \
     'reduction.csv' skip 1 using 1:4 with linespoints title 'oracle'
set autoscale y

set output 'fig8-cores-fair.svg'
set title 'Cores by loss group, fair (Fig. 8)'
set xlabel 'time (s)'
set ylabel 'cores'
plot 'fair/timeline.csv' skip 1 using 1:4 with lines title 'high loss (top 25%)', \
     '' skip 1 using 1:5 with lines title 'medium (next 25%)', \
     '' skip 1 using 1:6 with lines title 'low (bottom 50%)'

set output 'fig8-cores-slaq.svg'
set title 'Cores by loss group, slaq (Fig. 8)'
set xlabel 'time (s)'
set ylabel 'cores'
plot 'slaq/timeline.csv' skip 1 using 1:4 with lines title 'high loss (top 25%)', \
     '' skip 1 using 1:5 with lines title 'medium (next 25%)', \
     '' skip 1 using 1:6 with lines title 'low (bottom 50%)'

set output 'fig8-cores-oracle.svg'
set title 'Cores by loss group, oracle (Fig. 8)'
set xlabel 'time (s)'
set ylabel 'cores'
plot 'oracle/timeline.csv' skip 1 using 1:4 with lines title 'high loss (top 25%)', \
     '' skip 1 using 1:5 with lines title 'medium (next 25%)', \
     '' skip 1 using 1:6 with lines title 'low (bottom 50%)'

set output 'fig10c-sched.svg'
set title 'Scheduling time per epoch against active jobs (Fig. 10c)'
set xlabel 'active jobs'
set ylabel 'slaq\_sched\_epoch wall time (ms)'
set yrange [0:*]
stats 'fair/sched.csv' skip 1 using 2 nooutput
bw0 = STATS_max > 50 ? ceil(STATS_max / 50.0) : 1
stats 'slaq/sched.csv' skip 1 using 2 nooutput
bw1 = STATS_max > 50 ? ceil(STATS_max / 50.0) : 1
stats 'oracle/sched.csv' skip 1 using 2 nooutput
bw2 = STATS_max > 50 ? ceil(STATS_max / 50.0) : 1
plot 'fair/sched.csv' skip 1 using (bw0 * floor($2 / bw0)):3 smooth unique with linespoints title 'fair', \
     'slaq/sched.csv' skip 1 using (bw1 * floor($2 / bw1)):3 smooth unique with linespoints title 'slaq', \
     'oracle/sched.csv' skip 1 using (bw2 * floor($2 / bw2)):3 smooth unique with linespoints title 'oracle'
set autoscale y

set output 'fig9-sweep.svg'
set title 'Mean time to 90% / 95% loss reduction against arrival rate (Fig. 9)'
set xlabel 'mean inter-arrival time (s)'
set ylabel 'time since arrival (s)'
set yrange [0:*]
plot 'sweep.csv' skip 1 using 1:2 with linespoints linecolor 1 title 'fair 90%', \
     'sweep.csv' skip 1 using 1:3 with linespoints linecolor 1 dashtype 2 title 'fair 95%', \
     'sweep.csv' skip 1 using 1:6 with linespoints linecolor 2 title 'slaq 90%', \
     'sweep.csv' skip 1 using 1:7 with linespoints linecolor 2 dashtype 2 title 'slaq 95%', \
     'sweep.csv' skip 1 using 1:10 with linespoints linecolor 3 title 'oracle 90%', \
     'sweep.csv' skip 1 using 1:11 with linespoints linecolor 3 dashtype 2 title 'oracle 95%'
