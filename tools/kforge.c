/* Placeholder: the kforge command line. */
#include <stdio.h>
int main(void) { fputs("kforge: not built yet\n", stderr); return 2; }
