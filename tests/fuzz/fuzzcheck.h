#pragma once
// The fuzz targets' assertion: a broken invariant stops the run like a crash does, so libFuzzer
// saves the input. Independent of NDEBUG and of Qt's assertion settings.

#define CHECK(condition)                                                                           \
    do {                                                                                           \
        if (!(condition))                                                                          \
            __builtin_trap();                                                                      \
    } while (false)
