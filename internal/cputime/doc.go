// Package cputime reads the processor time a thread or the whole process
// has used, on Linux (elsewhere every read reports false). The route
// optimizer measures its work rate by the first and waits for a quiet
// server by the second.
package cputime
