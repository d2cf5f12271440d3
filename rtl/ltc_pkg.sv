// Number formats of the tile ports and datapath: dtype_e is ltc::golden::DType (model/golden/
// dtype.h, the same codes as rtl_design.cpp's dtype_code; tests/rtl checks both sides), and the
// functions give each format's fields. Every *Type parameter of the RTL holds a dtype_e code.
// Integers report 1 exponent and 1 fraction bit so that unused float logic stays well formed.
// Each file that uses the package includes it, so every file also lints and elaborates on its
// own; the guard keeps it to one definition when the files are read together.
`ifndef LTC_PKG_SV
`define LTC_PKG_SV
package ltc_pkg;

  typedef enum int {
    INT8    = 0,
    INT16   = 1,
    INT32   = 2,
    FP16    = 3,
    BF16    = 4,
    FP8E4M3 = 5,
    FP8E5M2 = 6,
    FP32    = 7
  } dtype_e;

  // The functions below name the formats through these: Yosys 0.23 resolves an enum item inside a
  // package function only with the package prefix, which Icarus Verilog 11 rejects there.
  localparam int DtInt8 = INT8;
  localparam int DtInt16 = INT16;
  localparam int DtInt32 = INT32;
  localparam int DtFp16 = FP16;
  localparam int DtBf16 = BF16;
  localparam int DtFp8E4M3 = FP8E4M3;
  localparam int DtFp8E5M2 = FP8E5M2;
  localparam int DtFp32 = FP32;

  // Parameters hold codes as int (the PPA flow sets them by value), so the functions take int.
  function automatic int width(int t);
    if (t == DtInt8 || t == DtFp8E4M3 || t == DtFp8E5M2) width = 8;
    else if (t == DtInt16 || t == DtFp16 || t == DtBf16) width = 16;
    else width = 32;
  endfunction

  function automatic bit is_float(int t);
    is_float = t == DtFp16 || t == DtBf16 || t == DtFp8E4M3 || t == DtFp8E5M2 || t == DtFp32;
  endfunction

  function automatic bit is_dtype(int t);
    is_dtype = t >= DtInt8 && t <= DtFp32;
  endfunction

  function automatic int exp_bits(int t);
    if (t == DtFp16 || t == DtFp8E5M2) exp_bits = 5;
    else if (t == DtBf16 || t == DtFp32) exp_bits = 8;
    else if (t == DtFp8E4M3) exp_bits = 4;
    else exp_bits = 1;
  endfunction

  function automatic int man_bits(int t);
    if (t == DtFp16) man_bits = 10;
    else if (t == DtBf16) man_bits = 7;
    else if (t == DtFp8E4M3) man_bits = 3;
    else if (t == DtFp8E5M2) man_bits = 2;
    else if (t == DtFp32) man_bits = 23;
    else man_bits = 1;
  endfunction

  // E4M3 (OCP) has no infinities: S.1111.111 is NaN and overflow saturates to 448.
  function automatic bit has_inf(int t);
    has_inf = t != DtFp8E4M3;
  endfunction

  // Bits of the plane index of an LMMA of up to `planes` weight planes.
  function automatic int plane_width(int planes);
    plane_width = (planes > 1) ? $clog2(planes) : 1;
  endfunction

  // Accumulator formats of every tile (model/golden/lmma.cpp validate).
  function automatic bit is_acc(int t);
    is_acc = t == DtInt32 || t == DtFp16 || t == DtFp32;
  endfunction

endpackage

`endif  // LTC_PKG_SV
