/*
 * version.h — slaq's version, the one place it is written.
 *
 * Every program prints it for --version; the Makefile reads it for the
 * pkg-config files and the Debian package.
 */
#ifndef SLAQ_VERSION_H
#define SLAQ_VERSION_H

#define SLAQ_VERSION "0.1.0"

#endif
