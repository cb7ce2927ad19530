#pragma once
// Result files: nothing the user wrote is lost and no reader sees half a file.
#include <string>
#include <vector>

namespace ibn {

/// Writes `content` to `path`.
/// - A regular file or a new path is written atomically: a temporary file in the target's folder, flushed,
///   then renamed over it. Missing parent folders are created.
/// - A symbolic link is followed: its final target is replaced atomically (the link itself stays a link).
/// - Anything else that exists (a FIFO, a character or block device such as /dev/null) is opened and
///   written in place, never replaced. /dev/stdout, /dev/fd/1 and /proc/self/fd/1 write to standard output.
/// - A folder is refused with a message saying to name a file inside it.
/// Throws InputError naming the path on failure.
void write_file_atomic(const std::string& path, const std::string& content);

/// Whether an output path means standard output: "-", /dev/stdout, /dev/fd/1, /proc/self/fd/1
/// (write_file_atomic writes there instead of replacing a file).
bool names_stdout(const std::string& path);

/// Creates the folder `path` and its parents (nothing when it exists); InputError "FLAG PATH: cannot create
/// folder ...: REASON" when it cannot (a file on the way, no permission, /proc), never a filesystem_error.
void make_output_folder(const std::string& path, const std::string& flag = "-o");

/// Reads a whole file; throws InputError naming the path when it cannot be opened.
std::string read_file(const std::string& path);

/// Throws InputError "PATH: is a folder, not WHAT" when `path` names a folder (an std::ifstream opens one and
/// reads nothing, which the parsers then call malformed or empty).
void refuse_folder(const std::string& path, const std::string& what);

/// Throws InputError (naming `flag` and the input) when `out` is the same file (same device and inode) as
/// one of `inputs`, so `-o` never overwrites what the command reads. Paths that do not exist yet pass.
void refuse_output_equal_to_input(const std::string& out, const std::vector<std::string>& inputs,
                                  const std::string& flag);

/// Throws InputError when two of `inputs` are the same file (same device and inode, so a path through a
/// symbolic link or "./" counts too), naming both and adding `why`. Paths that do not exist are left to the
/// reader.
void refuse_same_file_twice(const std::vector<std::string>& inputs, const std::string& why);

} // namespace ibn
