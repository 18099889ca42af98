#!/usr/bin/env bash
# Draws the Cao et al. 2015 Fig. 5 panels (SMSE, SNLP and training time
# against the inducing set size m on kin40k) from bench_sparse's
# sparse_cholqr.csv with gnuplot: bench/plot_sparse.sh [DIR] (default out/bench).
set -euo pipefail
out="${1:-out/bench}"
csv="$out/sparse_cholqr.csv"
[ -f "$csv" ] || { echo "plot_sparse: no $csv" >&2; exit 1; }
plot() {  # column, label
  local series=""
  for method in random cholqr sggp mpgp; do
    series+="'< grep ^$method, $csv' using 2:$1 with linespoints lw 2 pt 7 title '$method', "
  done
  echo "set ylabel '$2'; plot ${series%, }"
}
gnuplot <<GNUPLOT
set datafile separator ','
set terminal pngcairo size 1500,450 font ',10'
set output '$out/fig5_kin40k.png'
set multiplot layout 1,3 title 'kin40k: CholQR against random and greedy inducing sets (Cao et al. 2015, Fig. 5)'
set logscale x 2
set xlabel 'inducing points m'
set key top right
$(plot 4 SMSE)
$(plot 5 SNLP)
set logscale y
$(plot 6 'training time (s)')
unset multiplot
GNUPLOT
echo "plot_sparse: wrote $out/fig5_kin40k.png"
