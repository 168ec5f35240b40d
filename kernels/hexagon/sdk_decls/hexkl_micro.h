/* Declarations only (sdk_decls/README.md): the HexKL micro functions this
 * project calls, with the signatures of HexKL's include/hexkl_micro.h. */
#ifndef HX_DECL_HEXKL_MICRO_H
#define HX_DECL_HEXKL_MICRO_H
#include <stdint.h>
#define HEXKL_HMX_ACTIVATION_ALIGNMENT (2048U)
#define HEXKL_HMX_WEIGHTS_ALIGNMENT    (128U)
#define HEXKL_HMX_CONFIG_ALIGNMENT     (256U)
uint32_t hexkl_micro_hmx_config_size(void);
int hexkl_micro_hmx_setup_acc_read_int32(uint8_t *vtcm_base, uint32_t hmx_config_offset);
void hexkl_micro_hmx_acc_clear_int32(void);
int hexkl_micro_hmx_acc_read_int32(uint8_t *vtcm_base, uint32_t hmx_config_offset, uint32_t out_offset);
int hexkl_micro_hmx_mm_u8i8(uint8_t *vtcm_base, uint32_t activation_offset, uint32_t weight_offset);
int hexkl_micro_hmx_rm_to_wh_i8(uint8_t *vtcm_base, uint32_t weight_offset, const int8_t *wt_old, uint32_t row_tile,
                                uint32_t col_tile, uint32_t wt_cols);
int hexkl_micro_hmx_copy_submatrix_to_8b_activation(uint8_t *vtcm_base, uint32_t out_offset,
                                                    const uint8_t *input_matrix, uint32_t tile_row, uint32_t tile_col,
                                                    uint32_t input_rows, uint32_t input_cols);
int hexkl_micro_hmx_copy_32b_to_submatrix(uint8_t *vtcm_base, uint32_t in_offset, int32_t *output_matrix,
                                          uint32_t tile_row, uint32_t tile_col, uint32_t output_rows,
                                          uint32_t output_cols);
#endif
