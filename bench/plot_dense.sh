#!/usr/bin/env bash
# Plots bench_dense's CSV files (see run_dense_bench.sh) with gnuplot.
set -euo pipefail
out="${1:-out/bench}"
trace="$out/table2_trace.csv"
[ -f "$trace" ] || { echo "plot_dense: no $trace" >&2; exit 1; }
for dataset in $(tail -n +2 "$trace" | cut -d, -f1 | sort -u); do
  # f - f*, with f* the Cholesky objective (or the lowest seen), for a log scale.
  gap="$out/.gap_$dataset.csv"
  awk -F, -v ds="$dataset" 'NR > 1 && $1 == ds { if ($2 == "cholesky" || best == "" || $6 < best) { if ($2 == "cholesky") chol = $6; if ($6 < best || best == "") best = $6 } rows[++n] = $0 }
       END { fstar = (chol != "" ? chol : best); for (i = 1; i <= n; i++) { split(rows[i], f, ","); g = f[6] - fstar; if (g < 1e-12) g = 1e-12; print f[2] "," f[4] "," f[5] "," g } }' "$trace" > "$gap"
  solvers=$(cut -d, -f1 "$gap" | awk '!seen[$0]++' | grep -v cholesky || true)
  plot_g="" plot_f=""
  for solver in $solvers; do
    plot_g+="'$gap' using (strcol(1) eq '$solver' ? \$2 : 1/0):3 with lines lw 2 title '$solver', "
    plot_f+="'$gap' using (strcol(1) eq '$solver' ? \$2 : 1/0):4 with lines lw 2 title '$solver', "
  done
  gnuplot <<GNUPLOT
set datafile separator ','
set terminal pngcairo size 1200,480 font ',10'
set output '$out/fig2_3_$dataset.png'
set multiplot layout 1,2 title '$dataset: 10,000 training rows, tol 1e-4 (GBCD paper Figs 2-3)'
set logscale xy
set format x '%g'
set format y '10^{%L}'
set xrange [0.01:*]
set xlabel 'training time (s)'
set ylabel '|g|_2 / |y|_2'
set key bottom left
plot ${plot_g%, }
set ylabel 'f(alpha) - f(alpha*)'
plot ${plot_f%, }
unset multiplot
GNUPLOT
  rm -f "$gap"
done
if grep -q '^fig4,' "$out/dense_other.csv" 2>/dev/null; then
  # One file per solver, so that gnuplot joins each solver's points.
  grep '^fig4,gbcd,' "$out/dense_other.csv" > "$out/.fig4_gbcd.csv"
  grep '^fig4,bcd-cyclic,' "$out/dense_other.csv" > "$out/.fig4_cyclic.csv"
  gnuplot <<GNUPLOT
set datafile separator ','
set terminal pngcairo size 700,480 font ',10'
set output '$out/fig4_friedman1.png'
set title 'Friedman1: training time against n, tol 1e-4 (GBCD paper Fig 4)'
set xlabel 'training rows n'
set ylabel 'training time (s)'
set logscale y
set format y '%g'
set key top left
plot '$out/.fig4_gbcd.csv' using 3:6 with linespoints lw 2 title 'gbcd', \
     '$out/.fig4_cyclic.csv' using 3:6 with linespoints lw 2 title 'bcd-cyclic (not converged: stopped at the time limit)'
GNUPLOT
  rm -f "$out/.fig4_gbcd.csv" "$out/.fig4_cyclic.csv"
fi
echo "plot_dense: wrote $(ls "$out"/*.png | tr '\n' ' ')"
