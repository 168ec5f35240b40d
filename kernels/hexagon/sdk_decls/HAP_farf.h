/* Declarations only (sdk_decls/README.md): FARF, the SDK's DSP log macro
 * (HAP_farf.h); the real macro filters on FARF_<LEVEL> and adds the file and
 * line. */
#ifndef HX_DECL_HAP_FARF_H
#define HX_DECL_HAP_FARF_H
void HAP_debug_v2(int level, const char *file, int line, const char *format, ...);
#define FARF(level, ...) HAP_debug_v2(0, __FILE__, __LINE__, __VA_ARGS__)
#endif
