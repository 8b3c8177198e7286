-- The file name as the uploader gave it (control characters removed, at most 255 characters),
-- sent back in Content-Disposition. file_url keeps its reduced, URL-safe form. Rows from before
-- have none: their download name is the one in file_url.
ALTER TABLE documents ADD COLUMN file_name text CHECK (char_length(file_name) BETWEEN 1 AND 255);
