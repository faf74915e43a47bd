/* SPDX-License-Identifier: Apache-2.0 */
/* Text for admitd's error codes; -errno values defer to strerror(). */
#include "adm/base/error.h"

#include <string.h>

const char *adm_strerror(int err)
{
    switch (err) {
    case ADM_OK: return "success";
    case ADM_AGAIN: return "operation would block";
    case ADM_DECLINED: return "declined";
    case ADM_ENOMEM: return "out of memory";
    case ADM_EINVAL: return "invalid argument";
    case ADM_ETLS: return "TLS failure";
    case ADM_EOF: return "end of stream";
    case ADM_ETOOBIG: return "size limit exceeded";
    case ADM_EIO: return "input/output error";
    case ADM_EPARSE: return "malformed data";
    default: break;
    }
    if (err < 0 && err > -1000) {
        return strerror(-err);
    }
    return "unknown error";
}
