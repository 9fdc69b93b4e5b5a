package api

// WindowsPath reports whether p is an absolute Windows path: on a drive
// (C:\…, C:/…, or C: alone), a UNC or device path (\\server\share,
// \\?\C:\…), or a drive in URI form (/C:/…, as a file:///C:/… URI and
// Cursor's workspace_roots on Windows write it). Read as a POSIX path it
// would be relative, or a directory named "C:", and so confined within
// the workspace as no Windows host would resolve it: the PDP judges
// POSIX paths only, and such a path is not supported yet.
func WindowsPath(p string) bool {
	if len(p) >= 2 && p[0] == '\\' && p[1] == '\\' {
		return true
	}
	if len(p) > 0 && p[0] == '/' {
		p = p[1:]
	}
	return len(p) >= 2 && isDriveLetter(p[0]) && p[1] == ':' && (len(p) == 2 || p[2] == '\\' || p[2] == '/')
}

func isDriveLetter(b byte) bool { return (b|0x20) >= 'a' && (b|0x20) <= 'z' }

// WindowsPathsUnsupported is what a call that names a Windows path is
// denied with: the words tell a person why, and that it is the PDP's
// limit, not the policy's judgment.
const WindowsPathsUnsupported = "Windows paths (C:\\…, \\\\server\\share) are not supported yet: the PDP judges POSIX paths only, so the call is denied rather than judged as if the path were a POSIX one"
