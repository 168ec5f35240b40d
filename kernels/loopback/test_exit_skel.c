/* A skel that prints and exits, for the stand-in's test of a dying PD
 * (tests/runner/test_ap_loopback_queue.py): linked as the loopback skel is
 * (dsp_pd.c and its -Wl,--wrap), so its stderr must land in the DSP log and
 * its exit() must kill the session, not the AP process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "AEEStdErr.h"
#include "remote.h"

__attribute__((visibility("default"))) int test_exit_skel_invoke(remote_handle64 h, uint32_t sc, remote_arg *pra) {
    (void)h;
    uint32_t m = REMOTE_SCALARS_METHOD(sc);
    if (m == 0) { /* the loader's open: int32 length, URI, out handle */
        if (REMOTE_SCALARS_INBUFS(sc) != 2 || REMOTE_SCALARS_OUTHANDLES(sc) != 1) return AEE_EBADPARM;
        pra[2].h64 = 0x7e57;
        return AEE_SUCCESS;
    }
    if (m == 1) return AEE_SUCCESS;
    fprintf(stderr, "test_exit_skel: a line the AP must not see\n");
    exit(3);
}
