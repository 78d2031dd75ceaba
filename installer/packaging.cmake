# Debian packages, built with `cpack -G DEB` in the build tree (tests/packaging does it):
#   ciphermq-broker  the daemon, cmq, /etc/ciphermq/config.toml (a conffile), the systemd unit,
#                    the operations and configuration guides
#   ciphermq-admin   the desktop console with its .desktop file and icon, when admin-gui/
#                    defines the ciphermq-admin target
# Included last from the top-level CMakeLists.txt, because it packages targets defined before.
#
# The packages use Debian's paths rather than the install prefix: the config under /etc, the
# unit under /lib/systemd/system (where bookworm's lintian wants packaged units). Every rule
# here is EXCLUDE_FROM_ALL, so a developer's plain `cmake --install` is unchanged and never
# writes to /etc or /lib; cpack installs component by component, which includes them.

set(CMQ_DEB_MAINTAINER "CipherMQ Maintainers <maintainers@ciphermq.org>"
    CACHE STRING "Maintainer field of the Debian packages")
set(CMQ_DEB_RELEASE 1 CACHE STRING "Debian revision of the packages (the -N in 0.1.0-N)")

set(cmq_installer_dir ${CMAKE_CURRENT_LIST_DIR})
set(cmq_changelog ${CMAKE_BINARY_DIR}/installer/changelog.Debian.gz)
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/installer)
# Written now so component installs work without cpack; cpack rewrites it (cpackproject.cmake).
include(${cmq_installer_dir}/changelog.cmake)
cmq_write_changelog(${cmq_changelog} ${PROJECT_VERSION} ${CMQ_DEB_RELEASE} "${CMQ_DEB_MAINTAINER}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${cmq_installer_dir}/changelog.in)

# --- ciphermq-broker -------------------------------------------------------------------------
install(TARGETS ciphermq-broker cmq RUNTIME DESTINATION bin
    COMPONENT ciphermq-broker EXCLUDE_FROM_ALL)
# Shipped with the aes_key placeholder and mode 0644; postinst fills in a key and makes it
# root:ciphermq 0640 before anything secret is in it.
install(FILES ${CMAKE_SOURCE_DIR}/resources/config.toml DESTINATION /etc/ciphermq
    COMPONENT ciphermq-broker EXCLUDE_FROM_ALL)
install(FILES ${cmq_installer_dir}/ciphermq-broker.service DESTINATION /lib/systemd/system
    COMPONENT ciphermq-broker EXCLUDE_FROM_ALL)
install(FILES ${cmq_installer_dir}/copyright ${cmq_changelog}
    ${CMAKE_SOURCE_DIR}/docs/OPERATIONS.md ${CMAKE_SOURCE_DIR}/docs/CONFIGURATION.md
    DESTINATION share/doc/ciphermq-broker COMPONENT ciphermq-broker EXCLUDE_FROM_ALL)
set(CPACK_COMPONENTS_ALL ciphermq-broker)

# --- ciphermq-admin --------------------------------------------------------------------------
if(TARGET ciphermq-admin)
    install(TARGETS ciphermq-admin RUNTIME DESTINATION bin
        COMPONENT ciphermq-admin EXCLUDE_FROM_ALL)
    install(FILES ${CMAKE_SOURCE_DIR}/resources/ciphermq-admin.desktop
        DESTINATION share/applications COMPONENT ciphermq-admin EXCLUDE_FROM_ALL)
    install(FILES ${CMAKE_SOURCE_DIR}/resources/icons/ciphermq.svg
        DESTINATION share/icons/hicolor/scalable/apps COMPONENT ciphermq-admin EXCLUDE_FROM_ALL)
    install(FILES ${cmq_installer_dir}/copyright ${cmq_changelog}
        DESTINATION share/doc/ciphermq-admin COMPONENT ciphermq-admin EXCLUDE_FROM_ALL)
    list(APPEND CPACK_COMPONENTS_ALL ciphermq-admin)
endif()

# --- CPack -----------------------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ciphermq)
set(CPACK_PACKAGE_VENDOR CipherMQ)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# CPackDeb puts any non-default CPACK_PACKAGE_DESCRIPTION_SUMMARY in front of every component's
# description; with CPack's own default each package's first line below is its synopsis.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_STRIP_FILES TRUE)
set(CPACK_PROJECT_CONFIG_FILE ${cmq_installer_dir}/cpackproject.cmake)
set(CPACK_CMQ_INSTALLER_DIR ${cmq_installer_dir})
set(CPACK_CMQ_CHANGELOG ${cmq_changelog})

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # <name>_<version>-<release>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE ${CMQ_DEB_RELEASE})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CMQ_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SOURCE ciphermq)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends: from the shared libraries the binaries link (dpkg-shlibdeps), plus what they load
# at run time and dpkg-shlibdeps cannot see, listed per package below.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)

set(CPACK_DEBIAN_CIPHERMQ-BROKER_PACKAGE_NAME ciphermq-broker)
# The SQL drivers are Qt plugins; adduser creates the service account in postinst.
set(CPACK_DEBIAN_CIPHERMQ-BROKER_PACKAGE_DEPENDS "adduser, libqt6sql6-sqlite, libqt6sql6-psql")
set(CPACK_DEBIAN_CIPHERMQ-BROKER_PACKAGE_SUGGESTS "postgresql")
set(CPACK_DEBIAN_CIPHERMQ-BROKER_PACKAGE_CONTROL_EXTRA
    ${cmq_installer_dir}/debian/conffiles
    ${cmq_installer_dir}/debian/postinst
    ${cmq_installer_dir}/debian/prerm
    ${cmq_installer_dir}/debian/postrm)
set(CPACK_COMPONENT_CIPHERMQ-BROKER_DESCRIPTION
    "end-to-end-encrypted message broker (daemon and tools)
CipherMQ relays messages that clients encrypt end to end (X25519 and
ChaCha20-Poly1305): the broker routes, stores and delivers them without ever
being able to read them. Clients authenticate with TLS client certificates;
their certificate's common name is their identity for access control.
.
This package contains the broker daemon with its systemd service, the cmq
command-line client (including the cmq certs certificate tool) and the default
configuration in /etc/ciphermq.")

set(CPACK_DEBIAN_CIPHERMQ-ADMIN_PACKAGE_NAME ciphermq-admin)
set(CPACK_DEBIAN_CIPHERMQ-ADMIN_PACKAGE_SUGGESTS "ciphermq-broker")
set(CPACK_COMPONENT_CIPHERMQ-ADMIN_DESCRIPTION
    "desktop console for CipherMQ brokers
CipherMQ relays messages that clients encrypt end to end. This package contains
the graphical administration console: it connects to a broker's admin listener
over mutual TLS and shows queues, connections, rate limits and live metrics.")

include(CPack)
