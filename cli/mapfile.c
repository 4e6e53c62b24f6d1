/*
 * mapfile.c - the read-only whole-file mappings of mapfile.h.
 */
#include "mapfile.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const unsigned char *mapfile_map(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *m = MAP_FAILED;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size < ((off_t)1 << 40))
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	*size = (size_t)st.st_size;
	return m;
}

void mapfile_unmap(const unsigned char *m, size_t size)
{
	if (m)
		munmap((void *)m, size);
}
