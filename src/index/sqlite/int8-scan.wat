;; The candidate scan of the search thread's quantized vector copies (quantized-partition.ts), in WebAssembly SIMD:
;; 16 rows per step, four int8 columns per pass, exact integer arithmetic (the same sums as a scalar loop, bit for
;; bit). About 10x a JavaScript loop over the same layout: 8.5 ms instead of 80-95 ms for 1,048,576 rows and 76
;; query dimensions (docs/benchmarks.md). scripts/build-wasm.js compiles it into dist/index/sqlite/int8-scan.wasm.
(module
  (import "env" "memory" (memory 0 65536))
  ;; scores[i] += wa*a[i] + wb*b[i] + wc*c[i] + wd*d[i] for i in [0, rows), rows a multiple of 16 (columns are
  ;; padded with zeros). a..d: byte offsets of four int8 columns; scores: byte offset of int32 scores; weights are
  ;; int16 (the caller clamps them), so each product is exact in 32 bits.
  (func (export "accumulate4") (param $scores i32) (param $a i32) (param $b i32) (param $c i32) (param $d i32)
        (param $wa i32) (param $wb i32) (param $wc i32) (param $wd i32) (param $rows i32)
    (local $i i32) (local $s i32)
    (local $va v128) (local $vb v128) (local $vc v128) (local $vd v128)
    (local $lo v128) (local $hi v128)
    (local $acc0 v128) (local $acc1 v128) (local $acc2 v128) (local $acc3 v128)
    (local.set $va (i16x8.splat (local.get $wa)))
    (local.set $vb (i16x8.splat (local.get $wb)))
    (local.set $vc (i16x8.splat (local.get $wc)))
    (local.set $vd (i16x8.splat (local.get $wd)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $rows)))
        (local.set $s (i32.add (local.get $scores) (i32.shl (local.get $i) (i32.const 2))))
        (local.set $acc0 (v128.load offset=0 (local.get $s)))
        (local.set $acc1 (v128.load offset=16 (local.get $s)))
        (local.set $acc2 (v128.load offset=32 (local.get $s)))
        (local.set $acc3 (v128.load offset=48 (local.get $s)))
        ;; column a
        (local.set $lo (i16x8.extend_low_i8x16_s (v128.load (i32.add (local.get $a) (local.get $i)))))
        (local.set $hi (i16x8.extend_high_i8x16_s (v128.load (i32.add (local.get $a) (local.get $i)))))
        (local.set $acc0 (i32x4.add (local.get $acc0) (i32x4.extmul_low_i16x8_s (local.get $lo) (local.get $va))))
        (local.set $acc1 (i32x4.add (local.get $acc1) (i32x4.extmul_high_i16x8_s (local.get $lo) (local.get $va))))
        (local.set $acc2 (i32x4.add (local.get $acc2) (i32x4.extmul_low_i16x8_s (local.get $hi) (local.get $va))))
        (local.set $acc3 (i32x4.add (local.get $acc3) (i32x4.extmul_high_i16x8_s (local.get $hi) (local.get $va))))
        ;; column b
        (local.set $lo (i16x8.extend_low_i8x16_s (v128.load (i32.add (local.get $b) (local.get $i)))))
        (local.set $hi (i16x8.extend_high_i8x16_s (v128.load (i32.add (local.get $b) (local.get $i)))))
        (local.set $acc0 (i32x4.add (local.get $acc0) (i32x4.extmul_low_i16x8_s (local.get $lo) (local.get $vb))))
        (local.set $acc1 (i32x4.add (local.get $acc1) (i32x4.extmul_high_i16x8_s (local.get $lo) (local.get $vb))))
        (local.set $acc2 (i32x4.add (local.get $acc2) (i32x4.extmul_low_i16x8_s (local.get $hi) (local.get $vb))))
        (local.set $acc3 (i32x4.add (local.get $acc3) (i32x4.extmul_high_i16x8_s (local.get $hi) (local.get $vb))))
        ;; column c
        (local.set $lo (i16x8.extend_low_i8x16_s (v128.load (i32.add (local.get $c) (local.get $i)))))
        (local.set $hi (i16x8.extend_high_i8x16_s (v128.load (i32.add (local.get $c) (local.get $i)))))
        (local.set $acc0 (i32x4.add (local.get $acc0) (i32x4.extmul_low_i16x8_s (local.get $lo) (local.get $vc))))
        (local.set $acc1 (i32x4.add (local.get $acc1) (i32x4.extmul_high_i16x8_s (local.get $lo) (local.get $vc))))
        (local.set $acc2 (i32x4.add (local.get $acc2) (i32x4.extmul_low_i16x8_s (local.get $hi) (local.get $vc))))
        (local.set $acc3 (i32x4.add (local.get $acc3) (i32x4.extmul_high_i16x8_s (local.get $hi) (local.get $vc))))
        ;; column d
        (local.set $lo (i16x8.extend_low_i8x16_s (v128.load (i32.add (local.get $d) (local.get $i)))))
        (local.set $hi (i16x8.extend_high_i8x16_s (v128.load (i32.add (local.get $d) (local.get $i)))))
        (local.set $acc0 (i32x4.add (local.get $acc0) (i32x4.extmul_low_i16x8_s (local.get $lo) (local.get $vd))))
        (local.set $acc1 (i32x4.add (local.get $acc1) (i32x4.extmul_high_i16x8_s (local.get $lo) (local.get $vd))))
        (local.set $acc2 (i32x4.add (local.get $acc2) (i32x4.extmul_low_i16x8_s (local.get $hi) (local.get $vd))))
        (local.set $acc3 (i32x4.add (local.get $acc3) (i32x4.extmul_high_i16x8_s (local.get $hi) (local.get $vd))))
        (v128.store offset=0 (local.get $s) (local.get $acc0))
        (v128.store offset=16 (local.get $s) (local.get $acc1))
        (v128.store offset=32 (local.get $s) (local.get $acc2))
        (v128.store offset=48 (local.get $s) (local.get $acc3))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $next))))
)
