/* drop.h - the broker's one-way trip from root to broker_user. */
#ifndef SBX_DROP_H
#define SBX_DROP_H

/* Drop to user (chroot to root_dir first when not NULL); 0 or -1. */
int	drop_privileges(const char *user, const char *root_dir);

#endif
