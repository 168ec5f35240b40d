/* Declarations only (sdk_decls/README.md): the request fields this project
 * sets, in a layout that is NOT the SDK's. */
#ifndef HX_DECL_HAP_POWER_H
#define HX_DECL_HAP_POWER_H
#include "AEEStdErr.h"
typedef enum {
    HAP_power_set_mips_bw = 1,
    HAP_power_set_HVX,
    HAP_power_set_apptype,
    HAP_power_set_linelock,
    HAP_power_set_DCVS,
    HAP_power_set_DCVS_v2,
    HAP_power_set_vtcm,
    HAP_power_set_HMX,
    HAP_power_set_DCVS_v3,
    HAP_power_set_HMX_v2,
} HAP_Power_request_type;
typedef enum { HAP_POWER_UNKNOWN_CLIENT_CLASS, HAP_POWER_COMPUTE_CLIENT_CLASS = 0x2 } HAP_power_app_type_payload;
typedef enum {
    HAP_DCVS_VCORNER_DISABLE,
    HAP_DCVS_VCORNER_SVS,
    HAP_DCVS_VCORNER_NOM,
    HAP_DCVS_VCORNER_TURBO,
    HAP_DCVS_VCORNER_MAX = 255,
} HAP_dcvs_voltage_corner_t;
typedef struct {
    HAP_dcvs_voltage_corner_t target_corner, min_corner, max_corner;
} HAP_dcvs_params_t;
typedef struct {
    unsigned char set_dcvs_enable, dcvs_enable, dcvs_option;
    unsigned char set_latency;
    unsigned int latency;
    unsigned char set_core_params;
    HAP_dcvs_params_t core_params;
    unsigned char set_bus_params;
    HAP_dcvs_params_t bus_params;
    unsigned char set_dcvs_v3_params;
    unsigned char set_sleep_disable, sleep_disable;
} HAP_power_dcvs_v3_payload;
typedef struct {
    unsigned char power_up;
} HAP_power_hvx_payload;
typedef struct {
    unsigned char power_up;
} HAP_power_hmx_payload;
/* v75+: HMX power and its own clock (the fields llama.cpp's htp/main.c sets). */
typedef enum { HAP_DCVS_EXP_VCORNER_DISABLE, HAP_DCVS_EXP_VCORNER_MAX = 255 } HAP_dcvs_exp_voltage_corner_t;
typedef enum { HAP_CLK_PERF_HIGH, HAP_CLK_PERF_LOW } HAP_clk_perf_mode_t;
typedef struct {
    unsigned char set_power, power_up;
    unsigned char set_clock;
    HAP_dcvs_exp_voltage_corner_t target_corner, min_corner, max_corner;
    HAP_clk_perf_mode_t perf_mode;
} HAP_power_hmx_payload_v2;
typedef struct {
    HAP_Power_request_type type;
    union {
        HAP_power_app_type_payload apptype;
        HAP_power_dcvs_v3_payload dcvs_v3;
        HAP_power_hvx_payload hvx;
        HAP_power_hmx_payload hmx;
        HAP_power_hmx_payload_v2 hmx_v2;
    };
} HAP_power_request_t;
int HAP_power_set(void *context, HAP_power_request_t *request);
#endif
