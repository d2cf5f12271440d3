// Dtype codes (the value of ltc::golden::DType) and their formats, as macros so that they can size
// ports. 0 int8, 1 int16, 2 int32, 3 fp16, 4 bf16, 5 fp8e4m3, 6 fp8e5m2, 7 fp32.
// Integers report 1 exponent and 1 fraction bit so that unused float logic stays well formed.
`ifndef LTC_DTYPE_SVH
`define LTC_DTYPE_SVH

`define LTC_DT_WIDTH(t) (((t) == 0 || (t) == 5 || (t) == 6) ? 8 : \
                         ((t) == 1 || (t) == 3 || (t) == 4) ? 16 : 32)
`define LTC_DT_IS_FLOAT(t) ((t) >= 3)
`define LTC_DT_EXP(t) (((t) == 3 || (t) == 6) ? 5 : ((t) == 4 || (t) == 7) ? 8 : \
                       ((t) == 5) ? 4 : 1)
`define LTC_DT_MAN(t) (((t) == 3) ? 10 : ((t) == 4) ? 7 : ((t) == 5) ? 3 : ((t) == 6) ? 2 : \
                       ((t) == 7) ? 23 : 1)
// E4M3 (OCP) has no infinities: S.1111.111 is NaN and overflow saturates to 448.
`define LTC_DT_HAS_INF(t) ((t) != 5)

`endif
