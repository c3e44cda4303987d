"""ctext.py - C source split into its comments and the rest, for the
contrib scripts that read one or the other (filerefs.py, rootloc.py).
"""
import re


def split(text):
    """(comments, code): each the text with the other blanked, lines and
    columns kept. String and character literals are code."""
    com, code, i, n = [], [], 0, len(text)

    def put(piece, is_comment):
        blank = re.sub(r'[^\n]', ' ', piece)
        com.append(piece if is_comment else blank)
        code.append(blank if is_comment else piece)

    while i < n:
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j == -1 else j + 2
            put(text[i:j], True)
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j == -1 else j
            put(text[i:j], True)
        elif text[i] in '"\'':
            q, j = text[i], i + 1
            while j < n and text[j] != q and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            put(text[i:j], False)
        else:
            j = i + 1
            put(text[i], False)
        i = j
    return ''.join(com), ''.join(code)
