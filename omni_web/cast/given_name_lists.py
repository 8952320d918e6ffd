"""Given names common in English-language fiction of the last two centuries (and their usual short
forms), each used almost only for one sex; names used for both ("Jean", "Evelyn", "Marion",
"Leslie") are in neither. A module of its own so that the name reader can ask whether a word is a
given name without the gender logic built on it."""

from __future__ import annotations

__all__ = ["FEMALE_NAMES", "MALE_NAMES"]

MALE_NAMES = frozenset(
    """
    Aaron Abe Abel Abner Abraham Adam Adolf Adolphus Adrian Albert Alec Alexander Alexis Alf
    Alfred Algernon Alonzo Ambrose Amos Andrew Andy Angus Anthony Antonio Archibald Archie
    Arnold Arthur August Augustus Austin Barnaby Barney Bart Bartholomew Basil Ben Benedict
    Benjamin Bernard Bert Bertie Bertram Bill Billy Bob Bobby Boris Bradley Brian Bruce Bud
    Caleb Carl Cecil Cedric Charles Charley Charlie Chester Chris Christopher Clarence Claude
    Clement Clifford Clive Colin Conrad Cornelius Cuthbert Cyril Dan Daniel Danny David Davy
    Denis Dennis Derek Dick Dickie Dmitri Dolph Don Donald Dorian Douglas Duncan Ebenezer Ed
    Eddie Edgar Edmund Edward Edwin Egbert Eli Elias Elijah Elmer Emil Emmanuel Enoch Ephraim
    Eric Ernest Ernie Esau Eugene Ezekiel Ezra Felix Ferdinand Fitzwilliam Fred Freddie Freddy
    Frank Frederic Frederick Fyodor Gabriel Gaston Geoffrey George Gerald Gilbert Giles Gino Giovanni
    Giuseppe Godfrey Gordon Graham Gregory Guy Hal Hank Hans Harold Harry Harvey Hector Henry
    Herbert Herman Hiram Horace Horatio Hubert Hugh Hugo Humphrey Ichabod Ignatius Isaac Isaiah
    Ivan Jack Jacob Jake Jakey James Jamie Jared Jasper Jed Jeff Jem Jeremiah Jeremy Jerome
    Jerry Jesse Jim Jimmie Jimmy Joe Joel Joey John Johnny Jonah Jonathan Jos Joseph Josh Joshua
    Josiah Julian Julius Karl Ken Kenneth Kit Laurence Lawrence Len Leo Leon Leonard Leopold
    Lewis Lionel Lorenzo Louis Lucius Ludwig Luke Luther Malcolm Marcus Mark Martin Matt Matthew
    Maurice Max Maximilian Michael Mick Mickey Mike Miles Mortimer Moses Nat Nathan Nathaniel
    Ned Neville Nicholas Nick Nicolas Nigel Noah Noel Norman Obadiah Oliver Ollie Orlando Oscar
    Oswald Otto Owen Pat Patrick Paul Pedro Percival Percy Pete Peter Phil Philip Phillip Pierre
    Piotr Ralph Randolph Ray Raymond Reginald Reuben Richard Rob Robert Robin Roderick Rodney
    Roger Roland Ronald Roy Rudolf Rudolph Rufus Rupert Sam Sammy Samuel Saul Sebastian Seth
    Sidney Silas Simeon Simon Sol Solomon Stephen Steve Steven Stuart Sydney Ted Teddy Terence
    Theo Theodore Thomas Timothy Tobias Toby Tom Tommy Tony Victor Vincent Wallace Walter Wat
    Wilfred Wilfrid Will Willie William Willy Wolfgang Zachary Quincey Quincy Jarvis Alexei
    Sergei Nikolai Pyotr Jacques Jean-Baptiste Henri Étienne Gaspard Armand Raoul Marius Art
    Artie Gus Friedrich Fritz Heinrich Wilhelm
    """.split()
)
FEMALE_NAMES = frozenset(
    """
    Ada Adela Adelaide Adele Agatha Agnes Alice Alicia Amelia Amy Anastasia Angela Angelina Ann
    Anna Annabel Anne Annette Annie Antoinette Arabella Augusta Barbara Beatrice Becky Bella
    Bertha Bess Bessie Beth Betsey Betsy Betty Blanche Brenda Bridget Caroline Carrie Catherine
    Cathy Cecilia Cecily Celia Charlotte Clara Clarissa Constance Cora Cordelia Cynthia Daisy
    Deborah Delia Diana Dinah Dolly Dora Doris Dorothea Dorothy Edith Edna Eleanor Eleanora
    Elinor Eliza Elizabeth Ella Ellen Elsie Emily Emma Esther Ethel Eugenia Eva Evie Fanny
    Fannie Flora Florence Frances Frieda Georgiana Georgina Gertrude Grace Gwendolen Hannah
    Harriet Hattie Helen Helena Henrietta Hester Hetty Honoria Ida Irene Isabel Isabella
    Isabelle Ivy Jane Janet Janey Jennie Jenny Jessie Joan Josephine Josie Judith Julia Juley Juliet
    Kate Katharine Katherine Kathleen Katie Kitty Laura Lavinia Lena Letitia Lettice Lila Lilian
    Lillian Lily Liza Lizzie Lizzy Lottie Louisa Louise Lucia Lucinda Lucy Lydia Mabel Madeleine
    Madge Maggie Margaret Margery Maria Marian Marianne Marie Marjorie Martha Mary Matilda Maud
    Maude May Meg Melanie Mildred Millie Minnie Miriam Molly Nan Nancy Nell Nellie Nelly Nora
    Olive Olivia Pamela Patience Pauline Peggy Penelope Phoebe Polly Priscilla Prudence Rachael
    Rachel Rebecca Rhoda Rosa Rosalind Rose Rosie Ruth Sadie Sally Sara Sarah Sophia Sophie
    Sissy Sophy Susan Susanna Susie Sybil Tess Theresa Tilly Trixie Ursula Victoria Violet Virginia
    Winifred Lucie Lucile Lucille Mina Nina Vera Olga Sonia Sonya Natasha Tatiana Hermione
    Philippa Wilhelmina Effie Nettie Jessica Gwendoline Mathilde Jeanne Colette Yvonne Cosette
    Sallie Tina Flo Mattie Tillie Addie Aggie Dottie Lulu Mamie
    """.split()
)
