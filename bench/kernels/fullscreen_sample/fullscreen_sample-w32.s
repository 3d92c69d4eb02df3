BB0:
	v_lshl_add_u32 v2, s7, 3, v0                                ; d7460002 04010607
	v_lshl_add_u32 v3, s8, 3, v1                                ; d7460003 04050608
	v_cmp_le_u32_e32 vcc_lo, s3, v2                             ; 7d860403
	s_not_b32 vcc_hi, vcc_lo                                    ; beeb076a
	s_and_saveexec_b32 vcc_hi, vcc_hi                           ; beeb3c6b
BB1:
	v_cmp_le_u32_e64 s0, s4, v3                                 ; d4c30000 00020604
BB3:
	s_andn2_b32 exec_lo, vcc_hi, exec_lo                        ; 8a7e7e6b
BB4:
	s_andn2_b32 s0, s0, exec_lo                                 ; 8a007e00
	s_and_b32 s1, vcc_lo, exec_lo                               ; 87017e6a
	s_or_b32 s0, s0, s1                                         ; 88000100
BB6:
	s_mov_b32 exec_lo, vcc_hi                                   ; befe036b
	s_and_saveexec_b32 s0, s0                                   ; be803c00
BB9:
	s_andn2_b32 exec_lo, s0, exec_lo                            ; 8a7e7e00
	s_cbranch_execz BB12                                        ; bf880029
BB10:
	s_mov_b32 s1, s3                                            ; be810303
	s_movk_i32 s3, 0x8000                                       ; b0038000
	s_clause 0x4                                                ; bfa10004
	s_load_dwordx8 s[8:15], s[2:3], null                        ; f40c0201 fa000000
	s_load_dwordx4 s[16:19], s[2:3], 0x50                       ; f4080401 fa000050
	s_load_dwordx8 s[24:31], s[2:3], 0x60                       ; f40c0601 fa000060
	s_load_dwordx4 s[20:23], s[2:3], 0xb0                       ; f4080501 fa0000b0
	s_load_dwordx8 s[32:39], s[2:3], 0xc0                       ; f40c0801 fa0000c0
	v_cvt_f32_u32_e32 v0, v2                                    ; 7e000d02
	v_cvt_f32_u32_e32 v1, v3                                    ; 7e020d03
	v_add_f32_e32 v0, 0.5, v0                                   ; 060000f0
	v_add_f32_e32 v1, 0.5, v1                                   ; 060202f0
	v_cvt_f32_u32_e32 v4, s1                                    ; 7e080c01
	v_cvt_f32_u32_e32 v5, s4                                    ; 7e0a0c04
	v_rcp_f32_e32 v4, v4                                        ; 7e085504
	v_mul_f32_e32 v6, v0, v4                                    ; 100c0900
	v_rcp_f32_e32 v0, v5                                        ; 7e005505
	v_mul_f32_e32 v7, v1, v0                                    ; 100e0101
	s_waitcnt lgkmcnt(0)                                        ; bf8cc07f
	image_sample_lz v[8:11], v[6:7], s[8:15], s[16:19] dmask:0xf dim:SQ_RSRC_IMG_2D ; f09c0f08 00820806
	image_sample_lz v[4:7], v[6:7], s[24:31], s[20:23] dmask:0xf dim:SQ_RSRC_IMG_2D ; f09c0f08 00a60406
	s_waitcnt vmcnt(1)                                          ; bf8c3f71
	v_mul_f32_e32 v8, s5, v8                                    ; 10101005
	v_mul_f32_e32 v9, s5, v9                                    ; 10121205
	v_mul_f32_e32 v10, s5, v10                                  ; 10141405
	v_mul_f32_e32 v0, s5, v11                                   ; 10001605
	s_waitcnt vmcnt(0)                                          ; bf8c3f70
	v_fmac_f32_e32 v8, s6, v4                                   ; 56100806
	v_fmac_f32_e32 v9, s6, v5                                   ; 56120a06
	v_fmac_f32_e32 v10, s6, v6                                  ; 56140c06
	v_fmac_f32_e32 v0, s6, v7                                   ; 56000e06
	v_mov_b32_e32 v11, v0                                       ; 7e160300
	image_store v[8:11], v[2:3], s[32:39] dmask:0xf dim:SQ_RSRC_IMG_2D unorm glc ; f0203f08 00080802
BB12:
	s_endpgm                                                    ; bf810000
