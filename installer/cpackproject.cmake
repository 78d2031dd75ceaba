# CPACK_PROJECT_CONFIG_FILE: cpack reads this for each generator after CPackConfig.cmake and
# after any -D overrides, before it installs anything. The Debian changelog is (re)written here
# so that its top entry always names the version being packaged, including a revision bumped
# on the command line (cpack -D CPACK_DEBIAN_PACKAGE_RELEASE=2, as tests/packaging does).
if(CPACK_GENERATOR STREQUAL "DEB")
    include(${CPACK_CMQ_INSTALLER_DIR}/changelog.cmake)
    cmq_write_changelog(${CPACK_CMQ_CHANGELOG} ${CPACK_PACKAGE_VERSION}
        ${CPACK_DEBIAN_PACKAGE_RELEASE} "${CPACK_DEBIAN_PACKAGE_MAINTAINER}")
endif()
