# images/images.mk - `make images`: the service images, built from Debian
# packages with mmdebstrap and imported into podman (no registry needed).
# Included by GNUmakefile. Root only.
#
#   make images            build what changed, import what is missing
#   make images FORCE=1    rebuild and re-import both
#   make images RUNTIME=docker   import into docker instead (DOCKER_HOST
#                          names a daemon other than the default one)
#   make images-postgres   localhost/sbx-postgres:15
#   make images-redis      localhost/sbx-redis:7
#   make images PG_EXTRA_PACKAGES="postgresql-15-postgis-3"
#                          more Debian packages in the postgres image (its
#                          extensions, with their dependencies); changing
#                          the list rebuilds and re-imports that image
#   make images PG_EXTRA_PACKAGES="postgresql-15-postgis-3" \
#       PG_TRUSTED_EXTENSIONS="postgis"
#                          and marks those extensions trusted, so that the
#                          sandbox's role (no superuser) may create them
#
# The postgres image has pgvector, built from Debian's source package
# (images/build.sh, build_pgvector: it needs postgresql-server-dev-15).
# Its import also puts its cluster template on the host, under
# SBX_TEMPLATES (default /var/lib/sbx/templates, root's, 0700), named
# after the image: sbx.conf(5)'s data_template (build.sh, install_template).
#
# $(IMG_O)/SVC.tar is the root file system (rebuilt when its inputs change);
# $(IMG_O)/SVC.id is the stamp: the id podman gave the last import. The
# import is skipped while the image under that tag still has that id and
# the stamp is newer than the tar. `make -j2 images` builds both at once.
# $(IMG_O)/postgres.extra holds PG_EXTRA_PACKAGES and PG_TRUSTED_EXTENSIONS
# of the last build and is rewritten only when they change, so that a new
# list rebuilds the tar.

IMG_O		 = $(O)/images
IMG_POSTGRES	?= localhost/sbx-postgres:15
IMG_REDIS	?= localhost/sbx-redis:7
IMG_DEPS	 = images/build.sh images/images.mk
RUNTIME		?= podman
PG_EXTRA_PACKAGES ?=
PG_TRUSTED_EXTENSIONS ?=

$(IMG_O)/postgres.extra: images-force
	@mkdir -p $(IMG_O)
	@printf '%s\n' '$(strip $(PG_EXTRA_PACKAGES))' \
	    '$(strip $(PG_TRUSTED_EXTENSIONS))' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(IMG_O)/postgres.tar: images/postgres/entrypoint.sh $(IMG_O)/postgres.extra \
    $(IMG_DEPS) $(if $(FORCE),images-force)
	@PG_EXTRA_PACKAGES='$(strip $(PG_EXTRA_PACKAGES))' \
	    PG_TRUSTED_EXTENSIONS='$(strip $(PG_TRUSTED_EXTENSIONS))' \
	    sh images/build.sh tar postgres $(IMG_O)
$(IMG_O)/redis.tar: images/redis/entrypoint.sh $(IMG_DEPS) $(if $(FORCE),images-force)
	@sh images/build.sh tar redis $(IMG_O)

images-postgres: $(IMG_O)/postgres.tar
	@FORCE=$(FORCE) RUNTIME=$(RUNTIME) sh images/build.sh import postgres $(IMG_O) $(IMG_POSTGRES)
images-redis: $(IMG_O)/redis.tar
	@FORCE=$(FORCE) RUNTIME=$(RUNTIME) sh images/build.sh import redis $(IMG_O) $(IMG_REDIS)

images: images-postgres images-redis

images-force:

images-clean:
	rm -rf $(IMG_O)

.PHONY: images images-postgres images-redis images-force images-clean
