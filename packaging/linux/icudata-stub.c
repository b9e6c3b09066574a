/* An empty ICU data library, in place of PySide6's 31 MB libicudata.so.NN.
 *
 * Qt links ICU for locale-aware collation, case mapping of a few languages and legacy
 * text codecs; Lantide uses none of them (text shaping is HarfBuzz's, line breaking and
 * Unicode properties Qt's own tables). With no data, ICU calls answer
 * U_MISSING_RESOURCE_ERROR and Qt takes its own fallbacks. This is ICU's own "stubdata"
 * (icu4c/source/stubdata/stubdata.cpp): a table of contents with no entries, exported
 * under the versioned entry-point name libicuuc looks for (ICUDATA_SYMBOL, e.g.
 * icudt73_dat). Built by packaging/build.py:
 *   gcc -shared -fPIC -DICUDATA_SYMBOL=icudt73_dat -Wl,-soname,libicudata.so.73 ...
 */
#include <stdint.h>

typedef struct {
    uint16_t size, reservedWord;
    uint8_t isBigEndian, charsetFamily, sizeofUChar, reservedByte;
    uint8_t dataFormat[4], formatVersion[4], dataVersion[4];
} UDataInfo;

typedef struct {
    uint16_t headerSize;
    uint8_t magic1, magic2;
    UDataInfo info;
    char padding[8];
    uint32_t count, reserved;
    uint32_t toc[2];             /* one (name, data) offset pair; count says none */
    int fakeNameAndData[4];
} ICUDataHeader;

__attribute__((visibility("default")))
const ICUDataHeader ICUDATA_SYMBOL = {
    32, 0xda, 0x27,
    {sizeof(UDataInfo), 0,
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
     1,
#else
     0,
#endif
     0 /* ASCII family */, 2 /* sizeof(UChar) */, 0,
     {0x54, 0x6f, 0x43, 0x50} /* "ToCP" */, {1, 0, 0, 0}, {0, 0, 0, 0}},
    {0}, 0, 0, {0, 0}, {0, 0, 0, 0}
};
