/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Error codes shared by every admitd module. A function that can fail returns an int: 0 on
 * success or a negative code; where errno exists the code is -errno, project codes count down
 * from -1000. ADM_AGAIN and ADM_DECLINED are not errors but flow-control answers.
 */
#ifndef ADM_ERROR_H
#define ADM_ERROR_H

#define ADM_OK 0
#define ADM_AGAIN (-1000)    /* would block: the caller resumes on a callback */
#define ADM_DECLINED (-1001) /* not mine: try the next handler */
#define ADM_ENOMEM (-1002)   /* allocation failed */
#define ADM_EINVAL (-1003)   /* invalid argument or input */
#define ADM_ETLS (-1004)     /* TLS protocol or crypto failure */
#define ADM_EOF (-1005)      /* peer closed cleanly (TLS close_notify or FIN) */
#define ADM_ETOOBIG (-1006)  /* a size limit was exceeded */
#define ADM_EIO (-1007)      /* file could not be read or written */
#define ADM_EPARSE (-1008)   /* malformed data */

/** Returns a static English description of an ADM_E* or -errno code. Never NULL. */
const char *adm_strerror(int err);

#endif
