# cmq_write_changelog(OUT UPSTREAM RELEASE MAINTAINER): writes OUT (changelog.Debian.gz) for
# the package version UPSTREAM-RELEASE from changelog.in beside this file, compressed the way
# Debian wants it (gzip -9, no name or timestamp inside). The date honours SOURCE_DATE_EPOCH,
# so a rebuild of the same source produces the same file.
set(_cmq_changelog_dir ${CMAKE_CURRENT_LIST_DIR})

function(cmq_write_changelog out upstream release maintainer)
    set(CMQ_UPSTREAM_VERSION ${upstream})
    set(CMQ_DEB_RELEASE ${release})
    set(CMQ_DEB_VERSION ${upstream}-${release})
    set(CMQ_DEB_MAINTAINER ${maintainer})
    string(TIMESTAMP CMQ_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
    configure_file(${_cmq_changelog_dir}/changelog.in ${out}.txt @ONLY)
    execute_process(COMMAND gzip -9nc ${out}.txt OUTPUT_FILE ${out} RESULT_VARIABLE failed)
    if(failed)
        message(FATAL_ERROR "gzip failed for ${out}")
    endif()
endfunction()
