"""_error.py - dy2stc.Error: every failure of the package."""


class Error(Exception):
    """A failure of dy2stc, carrying the library's one-line message (the
    text ``dy2stc`` prints after ``dy2stc: ``) and its status code (a
    dy_status, 0 for failures the package itself finds)."""

    def __init__(self, message, status=0):
        super().__init__(message)
        self.message = message
        self.status = status

    def __str__(self):
        return self.message
