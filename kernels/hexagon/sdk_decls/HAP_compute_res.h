/* Declarations only (sdk_decls/README.md).  In the SDK these are static
 * inline wrappers; the signatures are the same. */
#ifndef HX_DECL_HAP_COMPUTE_RES_H
#define HX_DECL_HAP_COMPUTE_RES_H
#include "AEEStdErr.h"
typedef struct {
    unsigned long long attributes[8];
} compute_res_attr_t;
/* VTCM page layout (placeholder sizes). */
typedef struct {
    unsigned int page_size, num_pages;
} compute_res_vtcm_page_def_t;
typedef struct {
    unsigned int block_size;
    unsigned int page_list_len;
    compute_res_vtcm_page_def_t page_list[8];
} compute_res_vtcm_page_t;
/* The layouts are compute_res_vtcm_page_t * in the SDK's header (once void *
 * here, which accepted any pointer the real header would refuse). */
int HAP_compute_res_query_VTCM(unsigned int application_id, unsigned int *total_block_size,
                               compute_res_vtcm_page_t *total_block_layout, unsigned int *avail_block_size,
                               compute_res_vtcm_page_t *avail_block_layout);
int HAP_compute_res_attr_init(compute_res_attr_t *attr);
int HAP_compute_res_attr_set_serialize(compute_res_attr_t *attr, unsigned char b_enable);
int HAP_compute_res_attr_set_vtcm_param_v2(compute_res_attr_t *attr, unsigned int vtcm_size, unsigned int min_page_size,
                                           unsigned int min_vtcm_size);
int HAP_compute_res_attr_set_hmx_param(compute_res_attr_t *attr, unsigned char b_enable);
int HAP_compute_res_attr_set_release_callback(compute_res_attr_t *attr,
                                              int (*release_callback)(unsigned int context_id, void *client_context),
                                              void *client_context);
/* timeout_us is unsigned int in the SDK's header (vtcm_qurt.c asserts the
 * signature, so the real header checks this declaration on first build). */
unsigned int HAP_compute_res_acquire(compute_res_attr_t *attr, unsigned int timeout_us);
int HAP_compute_res_attr_get_vtcm_ptr_v2(compute_res_attr_t *attr, void **vtcm_ptr, unsigned int *vtcm_size);
int HAP_compute_res_release(unsigned int context_id);
int HAP_compute_res_hmx_lock(unsigned int context_id);
int HAP_compute_res_hmx_unlock(unsigned int context_id);
#endif
