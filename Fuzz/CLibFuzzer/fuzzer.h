// libFuzzer's entry for a program with its own main (LLVM 11 and later). Declared only: the symbol comes from
// the libFuzzer runtime that `-sanitize=fuzzer` links into the fuzz builds (`make fuzz`), never otherwise.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));
