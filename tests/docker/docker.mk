# docker.mk - `make docker`: `runtime = docker` against a real dockerd
# (tests/docker/run.sh). Root; Debian's docker.io comes from
# contrib/setup-docker.sh, the image tars from `make images`; the suite
# starts its own dockerd and loads the images into it. Under the host-wide
# lock ($(LOCKED)), like every suite that starts a monitor.

docker: all $(O)/images/postgres.tar $(O)/images/redis.tar
	@sh contrib/setup-docker.sh
	SBX_BUILD=$(abspath $(O)) $(LOCKED) tests/docker/run.sh

EXTRA_TESTS += docker

.PHONY: docker
