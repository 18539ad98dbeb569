# The Debian packages (docs/operations.md, "Install"; `make package`): CPack's DEB generator, one
# package per install component.
#   sworn         everything but the verifier: the daemons, the operator's programs, the signer,
#                 the units, the examples, the man pages and docs/. Its postinst
#                 (packaging/debian/postinst) adds the system users and makes the folders with
#                 their owners and modes; it enables and starts nothing.
#   sworn-verify  the auditor's verifier alone: sworn-verify and its two man pages, installed by
#                 verifier/CMakeLists.txt. Auditors install only this.
# CPack wraps the descriptions (first line: the summary; an empty line: a new paragraph).
# Both take the project's version (0.1.0-1) and their dependencies from dpkg-shlibdeps (dpkg-dev).
# Included by the top-level CMakeLists.txt after every install rule.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME sworn)
set(CPACK_PACKAGE_VENDOR "sworn")
set(CPACK_PACKAGE_CONTACT "sworn maintainers <maintainers@sworn.example>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL sworn sworn-verify)
# Debian's own file names: NAME_VERSION-RELEASE_ARCH.deb.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The maintainer scripts with mode 0755, the control files 0644, whatever the tree's modes.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_SWORN_PACKAGE_NAME sworn)
set(CPACK_DEBIAN_SWORN_DESCRIPTION
    "confinement and signed transparency log for AI agents
sworn decides every request an AI agent makes outside its sandbox by policy,
signs each decision with a key held in an HSM or TPM, and records it in an
append-only, Certificate-Transparency-style log that auditors verify offline.

This package holds the decision daemon (sworn-decisiond) and its signer, the
egress proxy (sworn-proxy), the witness (sworn-witness), the sandbox runner
(sworn-run), the operator's tools, their systemd units (none enabled or
started) and example configurations in /usr/share/sworn/examples.")
# adduser: the postinst makes the system users with it.
set(CPACK_DEBIAN_SWORN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_SWORN_PACKAGE_RECOMMENDS "sworn-verify")
set(CPACK_DEBIAN_SWORN_PACKAGE_SUGGESTS "softhsm2, tpm2-tools")
set(CPACK_DEBIAN_SWORN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_CURRENT_SOURCE_DIR}/packaging/debian/postinst
    ${CMAKE_CURRENT_SOURCE_DIR}/packaging/debian/postrm)

set(CPACK_DEBIAN_SWORN-VERIFY_PACKAGE_NAME sworn-verify)
set(CPACK_DEBIAN_SWORN-VERIFY_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_SWORN-VERIFY_DESCRIPTION
    "offline verifier of sworn transparency logs
sworn-verify checks a sworn log offline, on its own: the checkpoints'
signatures and TPM quotes, inclusion and consistency of every entry, the
keyring's history and the auditor's trust policy. It is written apart from the
recording side and needs no network, HSM or TPM.")

include(CPack)
