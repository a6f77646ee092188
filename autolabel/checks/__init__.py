"""Human checks of a job: the draw of turns by the pre-labeler's votes, its form and page."""
