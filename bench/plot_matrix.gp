# bench/plot_matrix.gp -- the plots of bench/matrix.sh, against connections:
# requests/s, server CPU per request, and p99 / p99.9 / max latency (one
# panel each), one line per pipeline depth and server. Colour says the
# depth, the dash the server (solid: the first of `kinds`, ringkv).
#
#   gnuplot -e "dir='DATA'; out='PNGDIR'; tests='get set'; pipes='1 8 32 128'; \
#               kinds='ringkv-t1 redis'; conns='64 256 1024 4096 16384'" bench/plot_matrix.gp
#
# DATA/TEST-KIND-P.dat: "conns rps cpu_us p99_ms p999_ms max_ms", medians
# over the rounds, one line per connection count. Writes PNGDIR/TEST-rps.png,
# TEST-cpu.png and TEST-latency.png.

set terminal pngcairo size 1000,650 noenhanced font ",10"
set logscale x 2
set logscale y 10
set grid xtics ytics mytics
set key outside right top
set xlabel "connections"
set pointsize 0.8
# ticks at the connection counts measured, not at every power of two
# and a margin either side, so the end ticks are not lost at the border
set xtics ()
cmin = 0; cmax = 0
do for [c in conns] {
    set xtics add (c int(c))
    if (cmin == 0 || int(c) < cmin) { cmin = int(c) }
    if (int(c) > cmax) { cmax = int(c) }
}
set xrange [cmin / 1.5 : cmax * 1.5]
# the same for values on a power of ten, which autoscaling puts on the border
set offsets 0, 0, graph 0.05, graph 0.05

file(t, k, p) = sprintf("%s/%s-%s-%s.dat", dir, t, k, p)
label(k, p) = sprintf("%s -P %s", k, p)

do for [t in tests] {
    T = t eq "get" ? "GET" : t eq "set" ? "SET" : t

    set output sprintf("%s/%s-rps.png", out, t)
    set title sprintf("%s: requests/s (conn_load; server on one CPU)", T)
    set ylabel "requests/s"
    plot for [j = 1:words(kinds)] for [i = 1:words(pipes)] file(t, word(kinds, j), word(pipes, i)) \
        using 1:2 with linespoints lc i dt j pt (j == 1 ? 7 : 6) title label(word(kinds, j), word(pipes, i))

    set output sprintf("%s/%s-cpu.png", out, t)
    set title sprintf("%s: server CPU per request (utime+stime / requests)", T)
    set ylabel "µs CPU per request"
    plot for [j = 1:words(kinds)] for [i = 1:words(pipes)] file(t, word(kinds, j), word(pipes, i)) \
        using 1:3 with linespoints lc i dt j pt (j == 1 ? 7 : 6) title label(word(kinds, j), word(pipes, i))

    set output sprintf("%s/%s-latency.png", out, t)
    set terminal pngcairo size 1000,1500 noenhanced font ",10"
    set multiplot layout 3, 1 title sprintf("%s: latency, send to reply, every request", T)
    do for [c = 4:6] {
        set title (c == 4 ? "p99" : c == 5 ? "p99.9" : "max")
        set ylabel "ms"
        plot for [j = 1:words(kinds)] for [i = 1:words(pipes)] file(t, word(kinds, j), word(pipes, i)) \
            using 1:c with linespoints lc i dt j pt (j == 1 ? 7 : 6) title label(word(kinds, j), word(pipes, i))
    }
    unset multiplot
    set terminal pngcairo size 1000,650 noenhanced font ",10"
}
